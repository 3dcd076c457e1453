#include "dlsched/config/job_codec.h"

#include <string>

#include <fmt/format.h>

namespace dlsched::config {
namespace {

using Text = JobFieldSink::Text;

// Shortest text that reads back as the same double.
std::string Num(double v) { return fmt::format("{}", v); }

// The fields after the job's work: what it has done, its attained service
// and Tiresias level.
void EncodeProgress(const core::JobSpec& job, JobFieldSink& sink) {
  if (job.steps_done != 0) sink.Scalar("stepsDone", Num(job.steps_done), Text::kPlain);
  if (job.attained != 0) sink.Scalar("attainedGpuSeconds", Num(job.attained), Text::kPlain);
  if (job.launch_attained != 0) {
    sink.Scalar("launchGpuSeconds", Num(job.launch_attained), Text::kPlain);
  }
  if (job.level != 0) sink.Scalar("level", fmt::format("{}", job.level), Text::kPlain);
  if (job.level_since) sink.Scalar("levelSince", Num(*job.level_since), Text::kPlain);
  if (job.level_base != 0) sink.Scalar("levelBaseGpuSeconds", Num(job.level_base), Text::kPlain);
  if (job.ran_since) sink.Scalar("ranSince", Num(*job.ran_since), Text::kPlain);
  if (job.level_place) sink.Scalar("levelPlace", Num(*job.level_place), Text::kPlain);
}

}  // namespace

void EncodeJob(const core::JobSpec& job, JobFieldSink& sink) {
  sink.Scalar("name", job.name, Text::kString);
  if (job.namespace_name != "default") sink.Scalar("namespace", job.namespace_name, Text::kString);
  sink.Scalar("arrival", Num(job.submit_time), Text::kPlain);
  if (job.priority != core::PriorityClass::kNormal) {
    sink.Scalar("priority", core::PriorityClassName(job.priority), Text::kPlain);
  }
  if (job.max_wait_minutes) sink.Scalar("maxWaitMinutes", Num(*job.max_wait_minutes), Text::kPlain);
  if (job.queue != "default") sink.Scalar("queue", job.queue, Text::kString);
  for (const core::Role role : {core::Role::kPS, core::Role::kChief}) {
    if (job.role(role).replicas > 0) sink.Role(core::RoleKey(role), job.role(role), false);
  }
  sink.Role(core::RoleKey(core::Role::kWorker), job.role(core::Role::kWorker), true);
  if (job.duration) {
    sink.Scalar("duration", Num(*job.duration), Text::kPlain);
    if (job.scaling != core::ScalingCurve{}) {
      sink.Scalar("scaling", job.scaling.ToString(), Text::kPlain);
    }
  } else {
    sink.Scalar("totalSteps", Num(job.total_steps), Text::kPlain);
  }
  EncodeProgress(job, sink);
  if (!job.duration && job.scaling != core::ScalingCurve{}) sink.Unwritten("scaling");
  if (!job.duration) sink.Throughput(job.throughput);
  if (job.launch_delay != 0) sink.Scalar("launchDelay", Num(job.launch_delay), Text::kPlain);
  if (job.checkpoint_delay != 0) {
    sink.Scalar("checkpointDelay", Num(job.checkpoint_delay), Text::kPlain);
  }
  if (job.deadline) sink.Scalar("deadline", Num(*job.deadline), Text::kPlain);
  if (job.initial) sink.Initial(*job.initial);
}

}  // namespace dlsched::config
