// What every fuzz target shares, in both of its builds: libFuzzer's (`make fuzz`: clang,
// -fsanitize=fuzzer) and the standalone replay driver's (replay_main.cc: the g++ builds of
// `make test` and `make test-asan`, which run each target over its corpus and its saved
// regression inputs as an ordinary ctest test). A target states its properties with
// FUZZ_CHECK: a broken property aborts, which libFuzzer saves as a crash input and the
// replay test reports as a failure naming the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tuneplane::fuzz {

// True in the replay driver (and under libFuzzer when TUNEPLANE_FUZZ_DEEP=1): a target may
// then run checks too slow for millions of executions (the renderer's `bash -n`).
bool deepChecks();

// `bash -n` over `script`: empty when bash accepts its syntax, else what bash said. Only
// called when deepChecks() is true.
std::string bashSyntaxErrors(const std::string& script);

// Prints what failed (and the input being replayed, in the replay driver) and aborts.
[[noreturn]] void checkFailed(const char* condition, const std::string& what, const char* file,
                              int line);

inline std::string_view asText(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace tuneplane::fuzz

// A property of the code under test; `what` (a std::string expression) says which input broke it.
#define FUZZ_CHECK(condition, what)                                                           \
  do {                                                                                        \
    if (!(condition)) ::tuneplane::fuzz::checkFailed(#condition, (what), __FILE__, __LINE__); \
  } while (0)
