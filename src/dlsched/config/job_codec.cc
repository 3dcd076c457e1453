#include "dlsched/config/job_codec.h"

#include <string>

#include <fmt/format.h>

namespace dlsched::config {
namespace {

using Text = JobFieldSink::Text;

// Shortest text that reads back as the same double.
std::string Num(double v) { return fmt::format("{}", v); }

// The fields after the job's work: what it has done, its attained service
// and what its policy keeps about it.
void EncodeProgress(const core::JobSpec& job, JobFieldSink& sink) {
  if (job.steps_done != 0) sink.Scalar("stepsDone", Num(job.steps_done), Text::kPlain);
  if (job.attained != 0) sink.Scalar("attainedGpuSeconds", Num(job.attained), Text::kPlain);
  if (job.launch_attained != 0) {
    sink.Scalar("launchGpuSeconds", Num(job.launch_attained), Text::kPlain);
  }
  // (A level or GPU-seconds of 0 is the same as none.)
  for (const core::StateField& f : core::kStateFields) {
    const auto it = job.policy_state.find(f.name);
    if (it == job.policy_state.end()) continue;
    const bool counts = f.kind == core::StateKind::kLevel || f.kind == core::StateKind::kGpuSeconds;
    if (!counts || it->second != 0) sink.Scalar(f.name, Num(it->second), Text::kPlain);
  }
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
  if (job.backoff_limit) sink.Scalar("backoffLimit", Num(*job.backoff_limit), Text::kPlain);
  if (!job.failures.empty()) sink.Failures(job.failures);
  if (job.initial) sink.Initial(*job.initial);
}

}  // namespace dlsched::config
