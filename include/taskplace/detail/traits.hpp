// taskplace/detail/traits.hpp: reading an optional member of a traits class.
//
// A traits member added after release (WakePlacer's Overlap, Duration and
// OnCurrent; IdleBalancer's Attempts) is optional: traits written before
// it, and not derived from the library's defaults, get the default.
//
//   template <class T> using attempts_member = typename T::Attempts;
//   using A = taskplace::detail::member_or_t<Traits, AttemptEveryLevel, attempts_member>;
#pragma once

#include "taskplace/detail/config.hpp"

#include <type_traits>

namespace taskplace::detail {

// Returns (as ::type): Member<Traits> if that names a type, else Default.
template <class Traits, class Default, template <class> class Member>
struct member_or {
  using type = Default;
};
template <class Traits, class Default, template <class> class Member>
  requires requires { typename Member<Traits>; }
struct member_or<Traits, Default, Member> {
  using type = Member<Traits>;
};
template <class Traits, class Default, template <class> class Member>
using member_or_t = typename member_or<Traits, Default, Member>::type;

// The member where it passed its check, else the default: after a failed
// check's static_assert, WakePlacer and IdleBalancer go on with the
// default, so that one bad member gives one error, not a cascade from its
// uses.
template <bool Ok, class Member, class Default>
using checked_t = std::conditional_t<Ok, Member, Default>;

}  // namespace taskplace::detail
