//===- FunctionRef.h - A callable passed down, not stored -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A non-owning reference to a callable, for a function that calls it before
// it returns: unlike std::function it never copies the callable, so a
// lambda with many captures costs no heap allocation. (C++17 has none, and
// the runtime keeps off LLVM's headers, which have llvm::function_ref.)
//
//===----------------------------------------------------------------------===//

#ifndef DTENSOR_RUNTIME_FUNCTIONREF_H
#define DTENSOR_RUNTIME_FUNCTIONREF_H

#include <memory>
#include <type_traits>
#include <utility>

namespace dtensor::rt {

template <typename Signature> class FunctionRef;

template <typename Result, typename... Args>
class FunctionRef<Result(Args...)> {
public:
  /// `callable` must outlive every call through this reference.
  template <typename Callable,
            typename = std::enable_if_t<!std::is_same_v<
                std::remove_cv_t<std::remove_reference_t<Callable>>,
                FunctionRef>>>
  FunctionRef(Callable &&callable) // NOLINT: implicit, as std::function
      : object(const_cast<void *>(
            static_cast<const void *>(std::addressof(callable)))),
        trampoline([](void *object, Args... args) -> Result {
          return (*static_cast<std::remove_reference_t<Callable> *>(object))(
              std::forward<Args>(args)...);
        }) {}

  Result operator()(Args... args) const {
    return trampoline(object, std::forward<Args>(args)...);
  }

private:
  void *object;
  Result (*trampoline)(void *, Args...);
};

} // namespace dtensor::rt

#endif // DTENSOR_RUNTIME_FUNCTIONREF_H
