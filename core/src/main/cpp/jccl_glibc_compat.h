/*
 * Force-included (gcc -include) into every translation unit of jccl's JNI library, JavaCPP's own glue included.
 *
 * glibc 2.34 moved libdl and libpthread into libc and gave their functions the new version GLIBC_2.34; a library
 * linked against glibc >= 2.34 would then refuse to load on older systems. Binding each reference to the oldest
 * version keeps the library loadable on glibc 2.28 (RHEL 8): those old versions remain exported by newer glibc.
 * A test reads the built library's dynamic symbol versions and fails on anything above 2.28.
 */
#ifndef JCCL_GLIBC_COMPAT_H
#define JCCL_GLIBC_COMPAT_H

#include <features.h>

#if defined(__GLIBC__) && (defined(__x86_64__) || defined(__aarch64__))
#if defined(__x86_64__)
#define JCCL_GLIBC_BASE "GLIBC_2.2.5"
#else
#define JCCL_GLIBC_BASE "GLIBC_2.17"
#endif
#define JCCL_PIN(symbol) __asm__(".symver " #symbol "," #symbol "@" JCCL_GLIBC_BASE);
JCCL_PIN(dlopen)
JCCL_PIN(dlsym)
JCCL_PIN(dlerror)
JCCL_PIN(dlclose)
JCCL_PIN(dladdr)
JCCL_PIN(dlinfo)
JCCL_PIN(pthread_key_create)
JCCL_PIN(pthread_key_delete)
JCCL_PIN(pthread_getspecific)
JCCL_PIN(pthread_setspecific)
JCCL_PIN(pthread_once)
JCCL_PIN(pthread_create)
JCCL_PIN(pthread_join)
JCCL_PIN(pthread_detach)
JCCL_PIN(pthread_mutex_trylock)
JCCL_PIN(pthread_attr_getstacksize)
JCCL_PIN(pthread_getattr_np)
JCCL_PIN(__pthread_key_create)
#undef JCCL_PIN

/*
 * libstdc++'s headers (gcc >= 11) read glibc 2.32's __libc_single_threaded to skip atomic reference counting. A
 * weak local definition that says "not single-threaded" keeps the always-correct atomic path and the reference
 * inside the library.
 */
#if defined(__cplusplus)
extern "C" {
#endif
__attribute__((weak, visibility("hidden"))) char __libc_single_threaded = 0;
#if defined(__cplusplus)
}
#endif
#endif

#endif /* JCCL_GLIBC_COMPAT_H */
