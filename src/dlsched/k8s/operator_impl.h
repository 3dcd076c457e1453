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

}  // namespace dlsched::k8s
