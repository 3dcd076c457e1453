// The queue orders: dlsched's default (None), Kueue's two, DRF and
// Volcano's two; the preemptors QueueReclaim (Kueue's) and VolcanoReclaim
// (docs/queues.md).

#include "dlsched/policy/framework/plugins.h"
#include "dlsched/policy/queues/preemptor_queue_reclaim.h"
#include "dlsched/policy/queues/queue_orders.h"

namespace dlsched::policy {
namespace {

void RegisterQueues(PluginTable& t) {
  t.queue_orders.emplace("None", NoArgs<engine::QueueOrder, NoQueueOrder>());
  t.queue_orders.emplace("Kueue", NoArgs<engine::QueueOrder, KueueQueueOrder>());
  t.queue_orders.emplace("KueueFairSharing",
                         NoArgs<engine::QueueOrder, KueueFairSharingQueueOrder>());
  t.queue_orders.emplace("Drf", NoArgs<engine::QueueOrder, DrfQueueOrder>());
  t.queue_orders.emplace("VolcanoProportion",
                         NoArgs<engine::QueueOrder, VolcanoProportionQueueOrder>());
  t.queue_orders.emplace("VolcanoCapacity",
                         NoArgs<engine::QueueOrder, VolcanoCapacityQueueOrder>());
  t.preemptors.emplace("QueueReclaim", MakeQueueReclaim);
  t.preemptors.emplace("VolcanoReclaim", MakeVolcanoReclaim);
}

}  // namespace

DLSCHED_REGISTER_UNIT(queues, RegisterQueues);

}  // namespace dlsched::policy
