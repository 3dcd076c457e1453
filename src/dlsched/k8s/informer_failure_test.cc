// An informer's thread that fails (an allocation, in its list, watch or
// handlers) does not end the process: the failure reaches the thread that
// asks, as it does for every thread of dlsched (docs/reliability.md).
#include <new>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "dlsched/k8s/informer.h"
#include "dlsched/k8s/rest_config.h"
#include "k8s/apiserver.h"

namespace dlsched::k8s {
namespace {

TEST(InformerFailureTest, AFailureOnItsThreadReachesTheCaller) {
  testing::TestApiServer server;
  ASSERT_TRUE(server.Start().has_value());
  const nlohmann::json node = {{"apiVersion", "v1"},
                               {"kind", "Node"},
                               {"metadata", {{"name", "n"}}},
                               {"status", {{"allocatable", {{"cpu", "1"}}}}}};
  ASSERT_TRUE(server.Create("nodes", "", node).has_value());
  RestConfig config;
  config.server = server.Url();
  config.bearer_token = "test-token";
  config.timeout_seconds = 5;
  InformerHandlers handlers;
  handlers.on_add = [](const nlohmann::json&) { throw std::bad_alloc(); };
  Informer informer(config, "/api/v1/nodes", handlers);
  EXPECT_NO_THROW(informer.RethrowFailure());
  informer.Start();
  EXPECT_FALSE(informer.WaitForSync(30));  // returns when the thread fails
  EXPECT_THROW(informer.RethrowFailure(), std::bad_alloc);
  EXPECT_THROW(informer.RethrowFailure(), std::bad_alloc);  // and stays failed
  informer.Stop();
}

}  // namespace
}  // namespace dlsched::k8s
