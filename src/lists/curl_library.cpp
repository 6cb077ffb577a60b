#include "curl_library.hpp"

#include <dlfcn.h>

namespace moat::lists::detail {
namespace {

template <class F>
bool resolve(void* handle, const char* name, F& out, std::string& error) {
    void* symbol = ::dlsym(handle, name);
    if (symbol == nullptr) {
        error = std::string("libcurl.so.4 has no ") + name;
        return false;
    }
    out =
        reinterpret_cast<F>(symbol);  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): dlsym
    return true;
}

CurlLibrary load() {
    CurlLibrary lib;
    // Never closed: curl_global_cleanup and OpenSSL's exit handlers expect the code to stay.
    void* handle = ::dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char* why = ::dlerror();  // NOLINT(concurrency-mt-unsafe): under the static's lock
        lib.error = std::string("cannot load libcurl (install libcurl4): ") +
                    (why != nullptr ? why : "unknown error");
        return lib;
    }
    std::string& e = lib.error;
    const bool all = resolve(handle, "curl_global_init", lib.global_init, e) &&
                     resolve(handle, "curl_easy_init", lib.easy_init, e) &&
                     resolve(handle, "curl_easy_setopt", lib.easy_setopt, e) &&
                     resolve(handle, "curl_easy_perform", lib.easy_perform, e) &&
                     resolve(handle, "curl_easy_getinfo", lib.easy_getinfo, e) &&
                     resolve(handle, "curl_easy_cleanup", lib.easy_cleanup, e) &&
                     resolve(handle, "curl_easy_strerror", lib.easy_strerror, e) &&
                     resolve(handle, "curl_slist_append", lib.slist_append, e) &&
                     resolve(handle, "curl_slist_free_all", lib.slist_free_all, e);
    if (all && lib.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        lib.error = "libcurl could not initialise";
    }
    return lib;
}

}  // namespace

const CurlLibrary& curl_library() {
    static const CurlLibrary kLibrary = load();
    return kLibrary;
}

}  // namespace moat::lists::detail
