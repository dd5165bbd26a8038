// The parts of a runtime call that may block — waits on doorbells, copies into new arena
// blocks — bracketed for the caller, which may let other threads run meanwhile: the Python
// bindings release the GIL there (plain C++: no Python headers).
//
//   {
//     Blocking blocking(scope);  // scope.Enter()
//     region.WaitForRoom(channels, deadline);
//   }                            // scope.Leave()
#ifndef DFIR_RUNTIME_NATIVE_BLOCKING_H_
#define DFIR_RUNTIME_NATIVE_BLOCKING_H_

namespace dfir::rt {

// One call's bracket: Enter before a part that may block, Leave after it (also when it throws).
// Enter and Leave alternate, never nested.
class BlockingScope {
 public:
  virtual ~BlockingScope() = default;
  virtual void Enter() = 0;
  virtual void Leave() = 0;
};

// Enters `scope` for its lifetime.
class Blocking {
 public:
  explicit Blocking(BlockingScope& scope) : scope_(scope) { scope_.Enter(); }
  ~Blocking() { scope_.Leave(); }
  Blocking(const Blocking&) = delete;
  Blocking& operator=(const Blocking&) = delete;

 private:
  BlockingScope& scope_;
};

}  // namespace dfir::rt

#endif  // DFIR_RUNTIME_NATIVE_BLOCKING_H_
