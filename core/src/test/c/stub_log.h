/*
 * Shared by the test stubs: every call appends one line to "<this library's file>.log", which the Java test reads.
 * The stubs stand in for libnccl.so.2 and libcudart.so.13 in the native layer's contract tests (no GPU needed).
 */
#ifndef STUB_LOG_H
#define STUB_LOG_H
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void stub_log(const char* format, ...) {
    Dl_info info;
    if (!dladdr((void*) &stub_log, &info) || info.dli_fname == NULL) return;
    char path[4096];
    snprintf(path, sizeof(path), "%s.log", info.dli_fname);
    FILE* f = fopen(path, "a");
    if (f == NULL) return;
    va_list args;
    va_start(args, format);
    vfprintf(f, format, args);
    va_end(args);
    fputc('\n', f);
    fclose(f);
}

/* Bytes as lower-case hex, into a static buffer (calls are single-threaded in the tests). */
__attribute__((unused)) static const char* stub_hex(const void* data, size_t n) {
    static char out[8192];
    const unsigned char* b = (const unsigned char*) data;
    size_t i;
    if (data == NULL) return "null";
    for (i = 0; i < n && 2 * i + 2 < sizeof(out); i++) sprintf(out + 2 * i, "%02x", b[i]);
    out[2 * i] = 0;
    return out;
}
#endif
