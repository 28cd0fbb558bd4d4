// Which sanitizer this translation unit is built with, asked the same way of
// both compilers: g++ defines __SANITIZE_ADDRESS__/__SANITIZE_THREAD__, clang
// 14 answers only __has_feature.  The library and its users build with the
// same flags, so an installed header may depend on it (frame pooling).
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define URINGKIT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define URINGKIT_ASAN 1
#endif
#endif
#ifndef URINGKIT_ASAN
#define URINGKIT_ASAN 0
#endif

#if defined(__SANITIZE_THREAD__)
#define URINGKIT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define URINGKIT_TSAN 1
#endif
#endif
#ifndef URINGKIT_TSAN
#define URINGKIT_TSAN 0
#endif
