#pragma once

#include <cstdint>
#include <string_view>

#include "dlsched/core/error.h"

namespace dlsched::core {

// A Kubernetes resource quantity (k8s.io/apimachinery/pkg/api/resource),
// parsed exactly as Kubernetes does:
//
//   <quantity> ::= <signedNumber><suffix>
//   <number>   ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
//   <suffix>   ::= Ki|Mi|Gi|Ti|Pi|Ei | m|""|k|M|G|T|P|E | (e|E)<signedNumber>
//
// The value is kept exactly in nano units (Kubernetes rounds anything finer
// than 1n up to 1n). Values whose nano representation does not fit in a
// signed 128-bit integer are rejected as overflow.
class Quantity {
 public:
  // Parses `text`. The error message is the reason only (e.g. "'1.2.3' is not
  // a valid quantity"); callers prefix the file and field path.
  static Result<Quantity> Parse(std::string_view text);

  // ceil(value * 1000), as Kubernetes' MilliValue(); error on int64 overflow.
  Result<int64_t> MilliValue() const;
  // ceil(value), as Kubernetes' Value(); error on int64 overflow.
  Result<int64_t> Value() const;

  bool IsNegative() const { return nano_ < 0; }
  bool IsZero() const { return nano_ == 0; }

 private:
  explicit Quantity(__int128 nano) : nano_(nano) {}
  __int128 nano_ = 0;
};

}  // namespace dlsched::core
