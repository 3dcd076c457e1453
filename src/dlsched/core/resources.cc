#include "dlsched/core/resources.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dlsched/core/quantity.h"

namespace dlsched::core {
namespace {

// The process-wide name table. A name is written once, into a chunk that
// never moves, before `count` covers it (a release store; readers load it
// with acquire), and never changes afterwards, so a string_view into it
// stays valid for the life of the process and only interning takes the
// lock: NumResources() and ResourceName() are read in the hot paths. A
// lookup by name (parsing) takes the lock too, and a hash map.
class Interner {
 public:
  Interner() {
    for (std::string_view name : {"cpu", "memory", "nvidia.com/gpu", "dlsched.io/gpu-milli"})
      Append(name, Count());
  }

  int Find(std::string_view name) const {
    std::lock_guard lock(mu_);
    return FindLocked(name);
  }

  Result<ResourceId> Intern(std::string_view name) {
    std::lock_guard lock(mu_);
    const int n = count_.load(std::memory_order_relaxed);  // only writers change it, locked
    if (int id = FindLocked(name); id >= 0) return static_cast<ResourceId>(id);
    if (n == kMaxResourceNames) {
      return Errorf("too many distinct resource names (at most {})", kMaxResourceNames);
    }
    Append(name, n);
    return static_cast<ResourceId>(n);
  }

  std::string_view Name(ResourceId id) const {
    if (id >= Count()) return {};
    return At(id);
  }

  int Count() const { return count_.load(std::memory_order_acquire); }

 private:
  static constexpr int kChunk = 256;

  const std::string& At(int id) const {
    return chunks_[id / kChunk].load(std::memory_order_relaxed)[id % kChunk];
  }
  // Under mu_ (or in the constructor): stores `name` as id `n` == Count().
  void Append(std::string_view name, int n) {
    if (n % kChunk == 0) {
      owned_.push_back(std::make_unique<std::string[]>(kChunk));
      chunks_[n / kChunk].store(owned_.back().get(), std::memory_order_relaxed);
    }
    std::string& slot = chunks_[n / kChunk].load(std::memory_order_relaxed)[n % kChunk];
    slot = std::string(name);
    ids_.emplace(slot, n);                           // the key views the slot, which never moves
    count_.store(n + 1, std::memory_order_release);  // publishes the chunk and the name
  }
  int FindLocked(std::string_view name) const {
    auto it = ids_.find(name);
    return it == ids_.end() ? -1 : it->second;
  }

  mutable std::mutex mu_;  // serialises Intern and guards ids_
  std::unordered_map<std::string_view, int> ids_;
  std::array<std::atomic<std::string*>, kMaxResourceNames / kChunk> chunks_{};
  std::vector<std::unique_ptr<std::string[]>> owned_;  // chunks_' storage, written under mu_
  std::atomic<int> count_ = 0;
};

Interner& Table() {
  static Interner table;
  return table;
}

// Kubernetes resource names are qualified names ("example.com/foo"); we only
// reject what could never be one and would garble our one-line messages.
bool IsValidName(std::string_view name) {
  if (name.empty()) return false;
  for (char ch : name) {
    auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c == 0x7f) return false;  // spaces and control characters
  }
  return true;
}

constexpr struct {
  std::string_view suffix;
  int shift;
} kBinarySuffixes[] = {
    {"Ei", 60}, {"Pi", 50}, {"Ti", 40}, {"Gi", 30}, {"Mi", 20}, {"Ki", 10},
};

}  // namespace

Result<ResourceId> InternResource(std::string_view name) {
  if (!IsValidName(name)) {
    return Errorf(
        "{} is not a valid resource name (expected a non-empty name without spaces, such as cpu "
        "or nvidia.com/gpu)",
        internal::QuoteInput(name));
  }
  return Table().Intern(name);
}

int FindResource(std::string_view name) { return Table().Find(name); }

std::string_view ResourceName(ResourceId id) { return Table().Name(id); }

int NumResources() { return Table().Count(); }

Result<int64_t> ParseResourceAmount(ResourceId id, std::string_view text) {
  DLSCHED_TRY_LET(q, Quantity::Parse(text));
  if (q->IsNegative()) {
    return Errorf("{} is negative; a resource request must be >= 0", internal::QuoteInput(text));
  }
  // Both round up, so a request never shrinks: "0.1m" cpu is 1 millicore and
  // "0.5" gpu is one device.
  auto amount = id == kCpu ? q->MilliValue() : q->Value();
  if (!amount) return Errorf("{} is too large", internal::QuoteInput(text));
  return *amount;
}

std::string GpuShareProblem(const Resources& r) {
  const int64_t milli = r[kGpuMilli];
  if (milli == 0) return {};
  if (milli >= kMilliPerGpu) {
    return fmt::format(
        "{} {} is a whole GPU or more; a share is 1..999 thousandths of one device (ask "
        "for whole GPUs as nvidia.com/gpu)",
        ResourceName(kGpuMilli), milli);
  }
  if (r[kGpu] > 0) {
    return fmt::format(
        "{} {} with nvidia.com/gpu {}: a task asks for whole GPUs or a share of "
        "one, not both",
        ResourceName(kGpuMilli), milli, r[kGpu]);
  }
  return {};
}

std::string NodeShareProblem(const Resources& allocatable) {
  const int64_t milli = allocatable[kGpuMilli];
  if (milli == 0 || milli == allocatable[kGpu] * kMilliPerGpu) return {};
  return fmt::format("expected 0 or 1000 per nvidia.com/gpu ({}), got {}",
                     allocatable[kGpu] * kMilliPerGpu, milli);
}

std::string FormatResourceAmount(ResourceId id, int64_t amount) {
  if (id == kCpu) {
    if (amount % 1000 == 0) return fmt::format("{}", amount / 1000);
    return fmt::format("{}m", amount);
  }
  if (id == kMemory && amount != 0) {
    for (const auto& s : kBinarySuffixes) {
      int64_t unit = int64_t{1} << s.shift;
      if (amount % unit == 0) return fmt::format("{}{}", amount / unit, s.suffix);
    }
  }
  return fmt::format("{}", amount);
}

int64_t Resources::MoreValue(ResourceId id) const {
  auto it = std::lower_bound(more.begin(), more.end(), id,
                             [](const auto& e, ResourceId key) { return e.first < key; });
  return it != more.end() && it->first == id ? it->second : 0;
}

int64_t& Resources::MoreSlot(ResourceId id) {
  auto it = std::lower_bound(more.begin(), more.end(), id,
                             [](const auto& e, ResourceId key) { return e.first < key; });
  if (it == more.end() || it->first != id) it = more.insert(it, {id, 0});
  return it->second;
}

void Resources::AddMore(const Resources& o, int64_t sign) {
  for (const auto& [id, x] : o.more) MoreSlot(id) += sign * x;
}

bool Resources::MoreEqual(const Resources& o) const {
  for (const auto& [id, x] : more) {
    if (x != o.MoreValue(id)) return false;
  }
  for (const auto& [id, x] : o.more) {
    if (x != MoreValue(id)) return false;
  }
  return true;
}

void Resources::MaxMore(const Resources& b) {
  for (auto& [id, x] : more) x = std::max(x, b.MoreValue(id));  // absent in b: 0
  for (const auto& [id, x] : b.more) {
    if (x > 0 && MoreValue(id) < x) MoreSlot(id) = x;
  }
}

bool Resources::MoreFitsIn(const Resources& o) const {
  for (const auto& [id, x] : more) {
    if (x > o.MoreValue(id)) return false;
  }
  for (const auto& [id, x] : o.more) {  // o below 0 where *this holds none
    if (x < 0 && MoreValue(id) > x) return false;
  }
  return true;
}

std::string FormatResources(const Resources& r) {
  std::string out;
  for (int i = 0; i < r.Width(); ++i) {
    auto id = static_cast<ResourceId>(i);
    if (r[id] == 0) continue;
    if (!out.empty()) out += ", ";
    std::string_view name = ResourceName(id);
    if (name.empty()) {
      out += fmt::format("resource-{}", i);  // never interned; cannot come from parsed input
    } else {
      out += name;
    }
    out += '=';
    out += FormatResourceAmount(id, r[id]);
  }
  return out.empty() ? "none" : out;
}

}  // namespace dlsched::core
