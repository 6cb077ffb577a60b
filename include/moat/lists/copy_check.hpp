// Recognising a damaged copy of a downloaded list: its size and 64-bit FNV-1a hash are taken
// while the download streams to disk (fetch.cpp) and recorded in its status at install; reading
// the copy again (the daemon's compile, each refresh) digests it the same way, so a truncated or
// overwritten copy no longer matches its status.
//
// FNV-1a is no defence against someone who can write the state directory; it notices a disk, a
// crash or a hand edit that changed the bytes, at the cost of one multiply per byte.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

#include "moat/lists/list_status.hpp"

namespace moat::lists {

/// The size and hash of a byte stream, fed in pieces of any size.
struct ContentDigest {
    static constexpr std::uint64_t kFnvOffset = 14695981039346656037ULL;
    static constexpr std::uint64_t kFnvPrime = 1099511628211ULL;

    std::uint64_t bytes = 0;
    std::uint64_t hash = kFnvOffset;  ///< FNV-1a 64 of every byte so far

    void add(std::string_view piece) noexcept {
        for (const char c : piece) {
            hash = (hash ^ static_cast<unsigned char>(c)) * kFnvPrime;
        }
        bytes += piece.size();
    }
};

/// A file read through a std::istream that digests every byte it hands out, so the copy is
/// checked while it is compiled instead of being read twice.
class DigestingReader : public std::streambuf {
public:
    explicit DigestingReader(const std::filesystem::path& path);

    [[nodiscard]] bool is_open() const noexcept { return file_ != nullptr; }
    /// Digests what the reader of the stream left unread, then the whole file's digest; empty
    /// when the file could not be opened or a read failed (the digest would be of less).
    [[nodiscard]] std::optional<ContentDigest> finish();

protected:
    int_type underflow() override;

private:
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_;
    std::vector<char> buffer_;
    ContentDigest digest_;
    bool failed_ = false;
};

/// The digest of the whole file at `path`; empty when it cannot be read.
[[nodiscard]] std::optional<ContentDigest> digest_file(const std::filesystem::path& path);

/// Why a copy that reads as `found` is not the one `status` recorded, as "expected 5290 bytes
/// (FNV-1a 0x...), found 2648 bytes (FNV-1a 0x...)"; empty when it is, or when the status has no
/// copy. A status without a hash (0) is checked by size alone; an unreadable copy (`found`
/// empty) never matches.
[[nodiscard]] std::string copy_mismatch(const ListStatus& status,
                                        const std::optional<ContentDigest>& found);

}  // namespace moat::lists
