// One HTTP(S) download of a list into a file, with libcurl.
//
// Verified TLS (the system CA store plus an optional extra CA file), http and https only (also
// after redirects, at most 5 of them), a size cap, connect and total timeouts, compressed
// transfer accepted. A conditional GET sends the validators of the copy on disk; a 304 leaves
// the file untouched. The body streams to the file as it arrives, so memory stays flat whatever
// the size. Blocking: call it from a background thread, never from the event loop.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

namespace moat::lists {

struct FetchOptions {
    std::chrono::milliseconds connect_timeout{10000};
    std::chrono::milliseconds timeout{120000};  ///< the whole transfer
    std::uint64_t max_bytes = 64ULL << 20U;     ///< of the body as received
    std::string ca_file;                        ///< extra trusted CAs (PEM); empty: none
    std::string user_agent = "dnsmoat";
    /// Set from another thread to abandon a transfer at once (shutdown); may be null.
    const std::atomic<bool>* cancel = nullptr;
};

/// Validators of the copy on disk, for If-None-Match / If-Modified-Since; empty: none.
struct Validators {
    std::string etag;
    std::string last_modified;
};

enum class FetchKind : std::uint8_t { downloaded, not_modified, failed };

struct FetchResult {
    FetchKind kind = FetchKind::failed;
    long http_status = 0;            ///< of the last response; 0 when none arrived
    Validators validators;           ///< of the new body (downloaded only)
    std::uint64_t bytes = 0;         ///< written to the file
    std::uint64_t content_hash = 0;  ///< ContentDigest hash of the body as written
    std::string error;               ///< why it failed, for logs and `dnsmoat lists`
};

/// Downloads `url` into `out` (created or truncated). On failure `out` may hold a partial body
/// and is the caller's to remove.
[[nodiscard]] FetchResult fetch_to_file(const std::string& url, const Validators& have,
                                        const std::filesystem::path& out,
                                        const FetchOptions& options);

}  // namespace moat::lists
