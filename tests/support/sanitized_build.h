// Whether the test was compiled for `make sanitize` (AddressSanitizer on, clang or gcc), for
// tests whose subject a sanitizer distorts: descriptor counts, real-time speed.
#pragma once

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KVSWEEP_TEST_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define KVSWEEP_TEST_SANITIZED 1
#endif

namespace kvsweep::testing {

#ifdef KVSWEEP_TEST_SANITIZED
inline constexpr bool kSanitizedBuild = true;
#else
inline constexpr bool kSanitizedBuild = false;
#endif

}  // namespace kvsweep::testing
