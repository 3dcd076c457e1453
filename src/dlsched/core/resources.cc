#include "dlsched/core/resources.h"

#include <atomic>
#include <mutex>
#include <string>
#include <string_view>

#include "dlsched/core/quantity.h"

namespace dlsched::core {
namespace {

// The process-wide name table. Each slot is written once, before `count`
// covers it (a release store; readers load it with acquire), and never
// changes afterwards, so a string_view into it stays valid for the life of
// the process and only interning takes the lock: NumResources() is called
// in every resource loop of the hot paths.
class Interner {
 public:
  Interner() {
    names_[kCpu] = "cpu";
    names_[kMemory] = "memory";
    names_[kGpu] = "nvidia.com/gpu";
    count_.store(3, std::memory_order_release);
  }

  int Find(std::string_view name) const { return FindIn(name, Count()); }

  Result<ResourceId> Intern(std::string_view name) {
    std::lock_guard lock(mu_);
    const int n = count_.load(std::memory_order_relaxed);  // only writers change it, locked
    if (int id = FindIn(name, n); id >= 0) return static_cast<ResourceId>(id);
    if (n == kMaxResources) {
      return Errorf("too many distinct resource names (at most {})", kMaxResources);
    }
    names_[n] = std::string(name);
    count_.store(n + 1, std::memory_order_release);
    return static_cast<ResourceId>(n);
  }

  std::string_view Name(ResourceId id) const {
    if (id >= Count()) return {};
    return names_[id];
  }

  int Count() const { return count_.load(std::memory_order_acquire); }

 private:
  int FindIn(std::string_view name, int count) const {
    for (int i = 0; i < count; ++i) {
      if (names_[i] == name) return i;
    }
    return -1;
  }

  std::mutex mu_;  // serialises Intern
  std::array<std::string, kMaxResources> names_;
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

std::string FormatResources(const Resources& r) {
  std::string out;
  for (int i = 0; i < kMaxResources; ++i) {
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
