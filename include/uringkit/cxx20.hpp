// Every installed header includes this first: below C++20 (concepts,
// coroutines, std::span) the errors would come from deep inside a header;
// this says what is wrong in one line.  The CMake package asks for C++20
// itself (cxx_std_20); with pkg-config, compile with -std=c++20 or later.
#pragma once

#if __cplusplus < 202002L
#error "uringkit needs C++20 or later: compile with -std=c++20 (or -std=gnu++20)"
#endif
