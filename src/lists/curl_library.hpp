// libcurl, loaded with dlopen() by the list fetcher only.
//
// The DNS process never maps libcurl and the TLS libraries it pulls in (about 6 MiB of resident
// memory): downloads run in a child process (`dnsmoat fetch-lists`, fetch_process.hpp), which
// loads the library on its first transfer. The functions are those of curl/curl.h, resolved by
// name; the header still gives the types and constants.
#pragma once

#include <curl/curl.h>

#include <string>

namespace moat::lists::detail {

struct CurlLibrary {
    CURLcode (*global_init)(long flags) = nullptr;
    CURL* (*easy_init)() = nullptr;
    CURLcode (*easy_setopt)(CURL* handle, CURLoption option, ...) = nullptr;
    CURLcode (*easy_perform)(CURL* handle) = nullptr;
    CURLcode (*easy_getinfo)(CURL* handle, CURLINFO info, ...) = nullptr;
    void (*easy_cleanup)(CURL* handle) = nullptr;
    const char* (*easy_strerror)(CURLcode code) = nullptr;
    curl_slist* (*slist_append)(curl_slist* list, const char* text) = nullptr;
    void (*slist_free_all)(curl_slist* list) = nullptr;
    std::string error;  ///< why the library is unusable; empty when it is loaded

    [[nodiscard]] bool ok() const noexcept { return error.empty(); }
};

/// Loads libcurl.so.4 and calls curl_global_init once (thread-safe); the same object after.
[[nodiscard]] const CurlLibrary& curl_library();

}  // namespace moat::lists::detail
