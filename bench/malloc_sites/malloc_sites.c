// An LD_PRELOAD library for bench/miss_allocations.py: counts the calls to malloc() per call
// stack (the six frames above it) and writes "count frame..." lines, each frame as
// "object+offset", to the file $MOAT_MALLOC_SITES when the process exits. Slow (a backtrace per
// call): for counting, never for timing.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kSlots = 8192, kDepth = 6 };

struct site {
    void* frames[kDepth];
    unsigned long calls;
};

static struct site sites[kSlots];
static unsigned long unplaced;  // calls from stacks beyond kSlots distinct ones
static pthread_mutex_t sites_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int in_hook;  // backtrace() may allocate: those calls are not counted

static void count(void) {
    void* frames[kDepth + 1] = {0};
    const int depth = backtrace(frames, kDepth + 1);  // frames[0] is this library
    uintptr_t hash = 0;
    for (int i = 1; i < depth; ++i) {
        hash = hash * 31 + (uintptr_t)frames[i];
    }
    pthread_mutex_lock(&sites_lock);
    unsigned probe = 0;
    for (; probe < kSlots; ++probe) {
        struct site* s = &sites[(hash + probe) % kSlots];
        if (s->calls == 0) {
            memcpy(s->frames, frames + 1, sizeof(void*) * kDepth);
        }
        if (memcmp(s->frames, frames + 1, sizeof(void*) * kDepth) == 0) {
            ++s->calls;
            break;
        }
    }
    if (probe == kSlots) {
        ++unplaced;
    }
    pthread_mutex_unlock(&sites_lock);
}

void* malloc(size_t size) {
    static void* (*real_malloc)(size_t);
    if (real_malloc == NULL) {
        real_malloc = (void* (*)(size_t))dlsym(RTLD_NEXT, "malloc");
    }
    if (!in_hook) {
        in_hook = 1;
        count();
        in_hook = 0;
    }
    return real_malloc(size);
}

static void write_sites(void) {
    const char* path = getenv("MOAT_MALLOC_SITES");
    FILE* out = fopen(path != NULL ? path : "malloc_sites.txt", "w");
    if (out == NULL) {
        return;
    }
    if (unplaced != 0) {
        fprintf(out, "%lu (stacks-beyond-the-table)\n", unplaced);
    }
    for (unsigned i = 0; i < kSlots; ++i) {
        if (sites[i].calls == 0) {
            continue;
        }
        fprintf(out, "%lu", sites[i].calls);
        for (int f = 0; f < kDepth && sites[i].frames[f] != NULL; ++f) {
            Dl_info info;
            if (dladdr(sites[i].frames[f], &info) != 0 && info.dli_fname != NULL) {
                const char* slash = strrchr(info.dli_fname, '/');
                fprintf(out, " %s+0x%lx", slash != NULL ? slash + 1 : info.dli_fname,
                        (unsigned long)((char*)sites[i].frames[f] - (char*)info.dli_fbase));
            }
        }
        fputc('\n', out);
    }
    fclose(out);
}

__attribute__((constructor)) static void start(void) {
    void* warm[2];
    backtrace(warm, 2);  // loads the unwinder now, not inside the first hooked malloc
    atexit(write_sites);
}
