#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "dlsched/core/error.h"

namespace dlsched::core {

// A Kubernetes resource quantity (k8s.io/apimachinery/pkg/api/resource),
// parsed exactly as Kubernetes does:
//
//   <quantity> ::= <signedNumber><suffix>
//   <number>   ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
//   <suffix>   ::= Ki|Mi|Gi|Ti|Pi|Ei | n|u|m|""|k|M|G|T|P|E | (e|E)<signedNumber>
//
// The value is kept exactly in nano units (Kubernetes rounds anything finer
// than 1n up to 1n). Values whose nano representation does not fit in a
// signed 128-bit integer are rejected as overflow.
//
// Where Kubernetes' scanner is looser than its own grammar, or caps values
// silently, we follow the grammar and keep the exact value, because a silent
// zero or cap in a resource request is a scheduling bug nobody sees:
//   - a number needs at least one digit: Kubernetes parses ".", "+", "-",
//     "Mi" and "-Ki" as 0; we reject them.
//   - Kubernetes caps a binary-SI value at 2^63-1 ("9Ei" parses as
//     9223372036854775807); we keep 9 * 2^60 and let Value() report overflow.
//   - Kubernetes truncates a decimal exponent to 32 bits ("1e4294967296" is
//     1); we use the exponent as written (here: overflow). An exponent that
//     does not fit in int64 is rejected by both.
// Rounding matches Kubernetes: a non-zero value finer than 1n is rounded away
// from zero ("0.9n" -> 1n, "-0.9n" -> -1n, "0.000000000001Ki" -> 2n).
class Quantity {
 public:
  Quantity() = default;

  // Parses `text`. The error message is the reason only (e.g. "'1.2.3' is not
  // a valid quantity"); callers prefix the file and field path.
  static Result<Quantity> Parse(std::string_view text);

  // value * 1000 as Kubernetes' MilliValue(): ceil for a non-negative value;
  // like Kubernetes, a negative one is rounded away from zero too ("-1.5m" ->
  // -2). Error on int64 overflow.
  Result<int64_t> MilliValue() const;
  // The value as Kubernetes' Value(), rounded like MilliValue() ("1.5" -> 2,
  // "-1.5" -> -2). Error on int64 overflow.
  Result<int64_t> Value() const;

  bool IsNegative() const { return nano_ < 0; }
  bool IsZero() const { return nano_ == 0; }

  // The exact value in units of 1e-9.
  __int128 Nano() const { return nano_; }
  // The exact value as a plain decimal without suffix: "1.5", "-0.000000001",
  // "1073741824".
  std::string ToString() const;

  friend bool operator==(const Quantity&, const Quantity&) = default;

 private:
  explicit Quantity(__int128 nano) : nano_(nano) {}
  __int128 nano_ = 0;
};

namespace internal {
// Echoes user input inside an error message on one line: non-printable bytes
// become \xNN and very long input is shortened.
std::string QuoteInput(std::string_view text);
}  // namespace internal

}  // namespace dlsched::core
