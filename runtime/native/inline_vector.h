// InlineVector: a vector of trivially copyable values that holds its first N in place, so the
// few messages of a common put or take cost no heap allocation (plain C++: no Python headers).
//
//   InlineVector<uint32_t, 4> channels;   // no allocation up to 4 values
//   channels.push_back(3);
//   for (uint32_t channel : channels) ...
#ifndef DFIR_RUNTIME_NATIVE_INLINE_VECTOR_H_
#define DFIR_RUNTIME_NATIVE_INLINE_VECTOR_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <memory>
#include <type_traits>

namespace dfir::rt {

template <typename T, size_t N>
class InlineVector {
  static_assert(std::is_trivially_copyable_v<T>, "values are moved by copying their bytes");

 public:
  InlineVector() = default;
  InlineVector(const InlineVector&) = delete;
  InlineVector& operator=(const InlineVector&) = delete;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }

  void push_back(const T& value) {
    if (size_ == capacity_) {
      const T copy = value;  // `value` may be one of the values that growing moves
      Grow(2 * capacity_);
      data_[size_++] = copy;
      return;
    }
    data_[size_++] = value;
  }
  template <typename... Args>
  void emplace_back(Args&&... args) {
    push_back(T{std::forward<Args>(args)...});
  }
  void reserve(size_t capacity) {
    if (capacity > capacity_) Grow(capacity);
  }

 private:
  void Grow(size_t capacity) {
    auto grown = std::make_unique<T[]>(capacity);
    std::copy(data_, data_ + size_, grown.get());
    heap_ = std::move(grown);
    data_ = heap_.get();
    capacity_ = capacity;
  }

  std::array<T, N> inline_;
  std::unique_ptr<T[]> heap_;
  T* data_ = inline_.data();
  size_t size_ = 0;
  size_t capacity_ = N;
};

// A callable's reference, called through one indirect call: what a function that only calls
// its callback takes instead of a std::function (which may allocate to hold a lambda). The
// callable must outlive the call it is passed to.
template <typename Signature>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef>>>
  FunctionRef(F&& callable)  // NOLINT: implicit, as a std::function parameter takes a lambda
      : callable_(const_cast<void*>(static_cast<const void*>(std::addressof(callable)))),
        call_([](void* target, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(target))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(callable_, std::forward<Args>(args)...); }

 private:
  void* callable_;
  R (*call_)(void*, Args...);
};

}  // namespace dfir::rt

#endif  // DFIR_RUNTIME_NATIVE_INLINE_VECTOR_H_
