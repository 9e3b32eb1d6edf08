// tests/fuzz/fuzz_support.hpp: reading fuzzer bytes as typed values, and
// failing loudly on a broken invariant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace fuzz {

// A broken invariant: print it and abort, so libFuzzer records the input.
[[noreturn]] inline void fail(const char* what, const char* file, int line) {
  std::fprintf(stderr, "invariant broken: %s at %s:%d\n", what, file, line);
  std::abort();
}

#define FUZZ_CHECK(cond)                               \
  do {                                                 \
    if (!(cond)) ::fuzz::fail(#cond, __FILE__, __LINE__); \
  } while (0)

// Consumes the input front to back; past the end every read yields zero.
class Bytes {
 public:
  Bytes(const std::uint8_t* data, std::size_t size) : p_(data), n_(size) {}

  bool empty() const noexcept { return n_ == 0; }
  std::size_t left() const noexcept { return n_; }

  template <class T>
  T get() noexcept {
    T v{};
    const std::size_t k = n_ < sizeof(T) ? n_ : sizeof(T);
    if (k != 0) std::memcpy(&v, p_, k);
    p_ += k;
    n_ -= k;
    return v;
  }
  std::uint8_t u8() noexcept { return get<std::uint8_t>(); }
  std::uint32_t u32() noexcept { return get<std::uint32_t>(); }
  std::int64_t i64() noexcept { return get<std::int64_t>(); }
  bool flag() noexcept { return (u8() & 1u) != 0; }
  // A value in [0, bound), bound >= 1.
  std::uint32_t below(std::uint32_t bound) noexcept { return u32() % bound; }

  // Up to `max` bytes, ending at the next '\x01' separator (consumed).
  std::string text(std::size_t max = 64) {
    std::string s;
    while (n_ != 0 && s.size() < max) {
      const char ch = static_cast<char>(*p_++);
      --n_;
      if (ch == '\x01') break;
      s.push_back(ch);
    }
    return s;
  }

 private:
  const std::uint8_t* p_;
  std::size_t n_;
};

}  // namespace fuzz
