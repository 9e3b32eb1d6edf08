// taskplace/testing/flip_conformance.hpp: conformance checks for the flip,
// wide and factor roles, usable from any test framework.
//
// Provides check_flip_decay<D>(), check_wide_rule<R>() and
// check_factor<F>(topology). Each returns the invariants the model breaks
// (concepts.hpp numbers them); an empty vector means it conforms. Kernel
// analogue: none; the invariants are what record_wakee() and wake_wide()
// rely on.
//
//   auto v = taskplace::testing::check_wide_rule<MyRule>();
//   assert(v.empty());
#pragma once

#include "taskplace/detail/config.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "taskplace/concepts.hpp"
#include "taskplace/testing/violation.hpp"
#include "taskplace/types.hpp"

namespace taskplace::testing {

namespace detail {

inline constexpr std::uint32_t u32_max = std::numeric_limits<std::uint32_t>::max();

// Flip counts worth probing: the edges, small counts, the factor-sized
// counts of real machines, and the overflow edges of f * lo for f = 4096.
inline constexpr std::array<std::uint32_t, 10> flip_samples{
    0u, 1u, 2u, 3u, 12u, 4096u, (1u << 20) - 1u, 1u << 20, 1u << 31, u32_max};
inline constexpr std::array<std::uint32_t, 6> factor_samples{
    0u, 1u, 2u, 12u, 4096u, u32_max};

struct WidePoint {
  std::uint32_t w, e, f;
};

inline constexpr std::size_t wide_point_count =
    flip_samples.size() * flip_samples.size() * factor_samples.size();

constexpr WidePoint wide_point(std::size_t i) noexcept {
  const std::size_t nf = factor_samples.size();
  const std::size_t ne = flip_samples.size();
  return {flip_samples[i / (ne * nf)], flip_samples[(i / nf) % ne], factor_samples[i % nf]};
}

// True when R::wide at sample point I is a constant expression: the
// compiler proves there is no overflow, no division by zero and no other
// undefined behaviour at that point (a failed constant evaluation is a
// substitution failure, not an error).
template <class R, std::size_t I>
concept WideConstantAt = requires {
  typename std::bool_constant<R::wide(wide_point(I).w, wide_point(I).e, wide_point(I).f)>;
};

template <class D, std::uint32_t X>
concept DecayConstantAt = requires { typename std::integral_constant<std::uint32_t, D::apply(X)>; };

template <class R, std::size_t... I>
constexpr std::array<bool, sizeof...(I)> wide_constant_table(std::index_sequence<I...>) noexcept {
  return {WideConstantAt<R, I>...};
}

template <class D, std::size_t... I>
constexpr std::array<bool, sizeof...(I)> decay_constant_table(std::index_sequence<I...>) noexcept {
  return {DecayConstantAt<D, flip_samples[I]>...};
}

inline std::string wide_args(const WidePoint& p) {
  return "wide(" + std::to_string(p.w) + ", " + std::to_string(p.e) + ", " +
         std::to_string(p.f) + ")";
}

}  // namespace detail

// Checks a FlipDecay at sampled counts (0, 1, small, 2^20, 2^31, UINT32_MAX):
//   R1 apply(x) is a constant expression (constexpr, no undefined behaviour);
//   I1 apply(x) <= x;
//   and apply is deterministic (two calls agree).
// Returns: the violations, cpu = no_cpu. Points failing R1 are not called
//   at run time. Complexity: O(samples). Thread-safety: pure.
template <FlipDecay D>
std::vector<Violation> check_flip_decay() {
  std::vector<Violation> out;
  constexpr auto constant = detail::decay_constant_table<D>(
      std::make_index_sequence<detail::flip_samples.size()>{});
  for (std::size_t i = 0; i < detail::flip_samples.size(); ++i) {
    const std::uint32_t x = detail::flip_samples[i];
    const std::string call = "apply(" + std::to_string(x) + ")";
    if (!constant[i]) {
      out.push_back({no_cpu, "FlipDecay R1: apply is constexpr and defined",
                     call + " is not a constant expression"});
      continue;
    }
    const std::uint32_t y = D::apply(x);
    if (y > x)
      out.push_back({no_cpu, "FlipDecay I1: apply(x) <= x",
                     call + " = " + std::to_string(y)});
    if (D::apply(x) != y)
      out.push_back({no_cpu, "FlipDecay: apply is deterministic",
                     call + " gave " + std::to_string(y) + ", then a different value"});
  }
  return out;
}

// Checks a WideRule over the grid flip_samples^2 x factor_samples (factors
// 0, 1, 2, 12, 4096, UINT32_MAX):
//   R1/I1 wide(w, e, f) is a constant expression at every point (constexpr,
//         no overflow, no division by zero);
//   and wide is deterministic (two calls agree).
// Returns: the violations, cpu = no_cpu. Points failing R1 are not called
//   at run time, so a rule that divides by zero is reported, not run.
// Complexity: O(grid) = 600 points, each evaluated at compile time too.
// Thread-safety: pure.
template <WideRule R>
std::vector<Violation> check_wide_rule() {
  std::vector<Violation> out;
  constexpr auto constant =
      detail::wide_constant_table<R>(std::make_index_sequence<detail::wide_point_count>{});
  for (std::size_t i = 0; i < detail::wide_point_count; ++i) {
    const detail::WidePoint p = detail::wide_point(i);
    if (!constant[i]) {
      out.push_back({no_cpu, "WideRule I1: defined for every 32-bit input",
                     detail::wide_args(p) + " is not a constant expression"});
      continue;
    }
    const bool a = R::wide(p.w, p.e, p.f);
    const bool b = R::wide(p.w, p.e, p.f);
    if (a != b)
      out.push_back({no_cpu, "WideRule: wide is deterministic",
                     detail::wide_args(p) + " gave " + (a ? "true" : "false") + ", then " +
                         (b ? "true" : "false")});
  }
  return out;
}

// Checks a FactorPolicy on every CPU of `t`:
//   I1 factor(t, c) >= 1 (checked on the value F returns, before any
//      conversion, so a negative signed factor is caught);
//   and factor is deterministic (two calls agree).
// Returns: the violations, one per CPU and rule. Complexity: O(cpu_count)
//   factor calls. Thread-safety: as t's const members.
template <class F, Topology T>
  requires FactorPolicy<F, T>
std::vector<Violation> check_factor(const T& t) {
  std::vector<Violation> out;
  const auto n = static_cast<std::uint32_t>(t.cpu_count());
  for (CpuId c = 0; c < n; ++c) {
    const auto raw = F::factor(t, c);
    using raw_t = std::remove_cv_t<decltype(raw)>;
    bool below_one = false;
    if constexpr (std::is_integral_v<raw_t>)
      below_one = raw < raw_t{1};
    else
      below_one = static_cast<std::uint32_t>(raw) < 1u;
    const auto value = static_cast<std::uint32_t>(raw);
    std::string shown;
    if constexpr (std::is_integral_v<raw_t>)
      shown = std::to_string(raw);
    else
      shown = std::to_string(value);
    if (below_one)
      out.push_back({c, "FactorPolicy I1: factor >= 1",
                     "factor(cpu " + std::to_string(c) + ") = " + shown});
    if (static_cast<std::uint32_t>(F::factor(t, c)) != value)
      out.push_back({c, "FactorPolicy: factor is deterministic",
                     "factor(cpu " + std::to_string(c) + ") gave " + std::to_string(value) +
                         ", then a different value"});
  }
  return out;
}

}  // namespace taskplace::testing
