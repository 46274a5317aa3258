// Whether this test binary runs against the ASan + UBSan library (the debug preset), decided at run
// time: the tests' own objects are the same in both builds (tests/CMakeLists.txt), only the link
// differs. __asan_init is defined by the ASan runtime that a sanitizer build links; a weak reference
// is null elsewhere. DENOTE_SANITIZED_BUILD=1 in the environment forces it (tests/mpi uses that name too).
#pragma once

#include <cstdlib>

extern "C" void __asan_init() __attribute__((weak));

namespace denote::testing {

inline bool sanitized_build() {
  if (const char* env = std::getenv("DENOTE_SANITIZED_BUILD"); env && *env && *env != '0') return true;
  return &__asan_init != nullptr;
}

}  // namespace denote::testing
