/*
 * A fake NVRTC for the kernel contract tests. Compiling succeeds unless the source contains "#error", in which case
 * the log carries the line after it; the "PTX" and "cubin" are the source itself (so the fake driver reads its kernel
 * lines), and every header name and option is logged. STUB_HIP builds hipRTC's names (a code object, no PTX/cubin).
 */
#include "stub_log.h"

#ifdef STUB_HIP
#define RTC(name) hiprtc##name
#define RTC_NAME "hiprtc"
#else
#define RTC(name) nvrtc##name
#define RTC_NAME "nvrtc"
#endif

typedef struct { char* source; char log[512]; } stub_program;

int RTC(Version)(int* major, int* minor) { *major = 13; *minor = 0; return 0; }
const char* RTC(GetErrorString)(int code) { return code == 6 ? "NVRTC_ERROR_COMPILATION" : "NVRTC_ERROR"; }
int RTC(CreateProgram)(stub_program** out, const char* src, const char* name, int n, const char* const* headers,
                       const char* const* names) {
    stub_program* p = (stub_program*) calloc(1, sizeof(stub_program));
    p->source = strdup(src);
    char text[2048] = "";
    for (int i = 0; i < n && strlen(text) < sizeof(text) - 128; i++) sprintf(text + strlen(text), "%s%s", i ? "," : "", names[i]);
    stub_log(RTC_NAME "CreateProgram name=%s headers=%s", name, text);
    *out = p;
    return 0;
}
int RTC(CompileProgram)(stub_program* p, int n, const char* const* options) {
    char text[4096] = "";
    for (int i = 0; i < n && strlen(text) < sizeof(text) - 256; i++) sprintf(text + strlen(text), "%s%s", i ? " " : "", options[i]);
    stub_log(RTC_NAME "CompileProgram options=%s", text);
    const char* e = strstr(p->source, "#error");
    if (e == NULL) return 0;
    snprintf(p->log, sizeof(p->log), "kernel.cu(1): error: %.200s", e + 7);
    char* end = strchr(p->log, '\n');
    if (end) *end = 0;
    return 6;
}
int RTC(DestroyProgram)(stub_program** p) { free((*p)->source); free(*p); *p = NULL; return 0; }
int RTC(GetProgramLogSize)(stub_program* p, size_t* n) { *n = strlen(p->log) + 1; return 0; }
int RTC(GetProgramLog)(stub_program* p, char* log) { strcpy(log, p->log); return 0; }
#ifdef STUB_HIP
int hiprtcGetCodeSize(stub_program* p, size_t* n) { *n = strlen(p->source) + 1; return 0; }
int hiprtcGetCode(stub_program* p, char* out) { strcpy(out, p->source); return 0; }
#else
int nvrtcGetPTXSize(stub_program* p, size_t* n) { *n = strlen(p->source) + 1; return 0; }
int nvrtcGetPTX(stub_program* p, char* out) { strcpy(out, p->source); return 0; }
int nvrtcGetCUBINSize(stub_program* p, size_t* n) { *n = strlen(p->source) + 1; return 0; }
int nvrtcGetCUBIN(stub_program* p, char* out) { strcpy(out, p->source); return 0; }
#endif
