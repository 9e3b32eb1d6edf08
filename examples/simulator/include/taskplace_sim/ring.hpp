// taskplace_sim/ring.hpp: a FIFO in one growable ring buffer.
//
// Used for a task's mailbox and for the event queue's fixed-delay lanes:
// no allocation per element once the ring has reached its working depth,
// and first-in first-out across growth and wrap-around.
//
//   taskplace_sim::Ring<int> r;
//   r.push_back(1);
//   r.push_back(2);
//   const int first = r.pop_front();  // 1
#pragma once

#include <cstddef>
#include <vector>

namespace taskplace_sim {

template <class T>
class Ring {
 public:
  bool empty() const noexcept { return size_ == 0; }
  std::size_t size() const noexcept { return size_; }
  // Effects: appends `v`. Complexity: amortised O(1).
  void push_back(const T& v) {
    if (size_ == buf_.size()) grow();
    buf_[(head_ + size_) & (buf_.size() - 1)] = v;
    ++size_;
  }
  // Precondition: !empty().
  const T& front() const noexcept { return buf_[head_]; }
  // Precondition: !empty().
  const T& back() const noexcept { return buf_[(head_ + size_ - 1) & (buf_.size() - 1)]; }
  // Effects: removes and returns the oldest element. Precondition: !empty().
  T pop_front() noexcept {
    const T v = buf_[head_];
    head_ = (head_ + 1) & (buf_.size() - 1);
    --size_;
    return v;
  }

 private:
  void grow() {
    std::vector<T> bigger(buf_.empty() ? 4 : buf_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = buf_[(head_ + i) & (buf_.size() - 1)];
    buf_.swap(bigger);
    head_ = 0;
  }
  std::vector<T> buf_;  // size a power of two
  std::size_t head_ = 0, size_ = 0;
};

}  // namespace taskplace_sim
