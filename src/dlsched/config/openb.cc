#include "dlsched/config/openb.h"

#include <string_view>

#include <fmt/format.h>

#include "dlsched/config/csv.h"

namespace dlsched::config {

using internal::CsvReader;
using internal::IntField;

namespace {

// Opens `path`, reads its header and calls row(fields, positions) for each
// row; a row's error (a RowError's text) is reported at its line.
template <typename Row>
core::Status ReadRows(const std::string& path, std::span<const std::string_view> columns,
                      std::span<const std::string_view> optional, Row row) {
  CsvReader csv(path);
  DLSCHED_TRY(csv.Open());
  DLSCHED_TRY_LET(pos, csv.Header(columns, optional));
  while (csv.Next()) {
    if (csv.TooLong()) return std::unexpected(csv.TooLongError());
    const std::vector<std::string_view>& f = csv.fields();
    if (csv.Quoted() || f.size() != csv.width()) {
      return std::unexpected(
          csv.At(fmt::format("expected {} comma-separated fields", csv.width())));
    }
    if (auto ok = row(f, *pos); !ok) return std::unexpected(csv.At(ok.error().what));
  }
  return csv.ReadError();
}

constexpr int64_t kMaxMilli = int64_t{1} << 40;

// `dst` = the value of a RowResult, or the row's error.
#define DLSCHED_OPENB_FIELD(dst, expr)                   \
  do {                                                   \
    auto field_ = (expr);                                \
    if (!field_) return std::unexpected(field_.error()); \
    (dst) = static_cast<decltype(dst)>(*field_);         \
  } while (0)
constexpr int kMaxGpus = 64;

}  // namespace

core::Result<std::vector<OpenbNode>> LoadOpenbNodes(const std::string& path) {
  constexpr std::string_view kColumns[] = {"sn", "cpu_milli", "memory_mib", "gpu", "model"};
  std::vector<OpenbNode> nodes;
  DLSCHED_TRY(
      ReadRows(path, kColumns, {},
               [&](const std::vector<std::string_view>& f,
                   const std::vector<int>& pos) -> internal::RowResult<bool> {
                 OpenbNode n;
                 n.name = f[pos[0]];
                 if (n.name.empty()) return internal::Bad("sn", "a node name", "");
                 DLSCHED_OPENB_FIELD(n.cpu_milli, IntField(f[pos[1]], "cpu_milli", 0, kMaxMilli));
                 DLSCHED_OPENB_FIELD(n.memory_mib, IntField(f[pos[2]], "memory_mib", 0, kMaxMilli));
                 DLSCHED_OPENB_FIELD(n.gpus, IntField(f[pos[3]], "gpu", 0, kMaxGpus));
                 n.model = f[pos[4]];
                 nodes.push_back(std::move(n));
                 return true;
               }));
  if (nodes.empty()) return core::Errorf("{}: no node (expected one row per node)", path);
  return nodes;
}

core::Result<std::vector<OpenbPod>> LoadOpenbPods(const std::string& path) {
  constexpr std::string_view kColumns[] = {"name", "cpu_milli", "memory_mib", "num_gpu",
                                           "gpu_milli"};
  constexpr std::string_view kOptional[] = {"gpu_spec"};
  std::vector<OpenbPod> pods;
  DLSCHED_TRY(ReadRows(
      path, kColumns, kOptional,
      [&](const std::vector<std::string_view>& f,
          const std::vector<int>& pos) -> internal::RowResult<bool> {
        OpenbPod p;
        p.name = f[pos[0]];
        if (p.name.empty()) return internal::Bad("name", "a pod name", "");
        DLSCHED_OPENB_FIELD(p.cpu_milli, IntField(f[pos[1]], "cpu_milli", 0, kMaxMilli));
        DLSCHED_OPENB_FIELD(p.memory_mib, IntField(f[pos[2]], "memory_mib", 0, kMaxMilli));
        DLSCHED_OPENB_FIELD(p.num_gpu, IntField(f[pos[3]], "num_gpu", 0, kMaxGpus));
        DLSCHED_OPENB_FIELD(p.gpu_milli, IntField(f[pos[4]], "gpu_milli", 0, 1000));
        if ((p.num_gpu == 0) != (p.gpu_milli == 0)) {
          return internal::Bad("gpu_milli", "0 exactly when num_gpu is 0", f[pos[4]]);
        }
        if (p.num_gpu > 1 && p.gpu_milli != 1000) {
          return internal::Bad("gpu_milli", "1000 for a pod of several GPUs (whole GPUs)",
                               f[pos[4]]);
        }
        if (pos[5] != CsvReader::kAbsent) {
          std::string_view spec = f[pos[5]];
          while (!spec.empty()) {
            const size_t bar = spec.find('|');
            const std::string_view part = spec.substr(0, bar);
            if (!part.empty()) p.gpu_spec.emplace_back(part);
            spec = bar == std::string_view::npos ? std::string_view() : spec.substr(bar + 1);
          }
        }
        pods.push_back(std::move(p));
        return true;
      }));
  if (pods.empty()) return core::Errorf("{}: no pod (expected one row per pod)", path);
  return pods;
}

#undef DLSCHED_OPENB_FIELD

}  // namespace dlsched::config
