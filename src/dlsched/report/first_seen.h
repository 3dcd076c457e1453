#pragma once

// Names numbered in the order they first appear, in constant time per name
// (a hash map): how the report groups rows by node, profile or directory.
// A search of the names seen so far per row made `dlsched report`
// quadratic in distinct names (100,000 nodes took 12 to 37 s, 100,000
// profiles of a sweep over a minute). `Hash` is for tests that count.

#include <cstddef>
#include <functional>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace dlsched::report {

template <typename Hash = std::hash<std::string_view>>
class FirstSeen {
 public:
  explicit FirstSeen(Hash hash = Hash()) : index_(16, std::move(hash)) {}

  // The number of `name`: 0 for the first name seen, then 1, ...; a name
  // seen before keeps its number. `name` must outlive this object.
  size_t Number(std::string_view name) {
    const auto [it, fresh] = index_.emplace(name, names_.size());
    if (fresh) names_.push_back(name);
    return it->second;
  }
  // Whether `name` was seen, without adding it.
  bool Seen(std::string_view name) const { return index_.contains(name); }
  // The names, in order of their first appearance.
  const std::vector<std::string_view>& names() const { return names_; }
  size_t size() const { return names_.size(); }

 private:
  std::unordered_map<std::string_view, size_t, Hash> index_;
  std::vector<std::string_view> names_;
};

}  // namespace dlsched::report
