#pragma once

// What the files of the operator (operator*.cc) share: the names they use
// unqualified. Not for other files.

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "dlsched/k8s/objects.h"
#include "dlsched/k8s/operator.h"

namespace dlsched::k8s {

using core::JobPhase;
using engine::JobIndex;
using engine::NodeIndex;
using engine::TaskRef;
using nlohmann::json;

// A permanent refusal: 400, 403, 422, or 404 on a create (the namespace or
// the kind is not there). The request will not succeed as it is; anything
// else (transport errors, 5xx, 409, 429) is transient and tried again.
bool Permanent(long status, bool create);
// What the API server said is wrong: "field: message" for each of the
// Status' details.causes, else its message, else "HTTP <code>".
std::string Refusal(const Response& r);
// How long a transient failure waits at least: the answer's Retry-After.
WorkQueue::Clock::duration RetryAfter(const core::Result<Response>& r);

}  // namespace dlsched::k8s
