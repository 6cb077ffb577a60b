// Recognising a damaged copy of a downloaded list: its size and a 64-bit hash are taken while
// the download streams to disk (fetch.cpp) and recorded in its status at install; reading the
// copy again (the daemon's compile, each refresh) digests it the same way, so a truncated or
// overwritten copy no longer matches its status.
//
// The hash is no defence against someone who can write the state directory; it notices a disk, a
// crash or a hand edit that changed the bytes. It runs on the start-up's path, every byte of
// every downloaded list, so it has to cost next to nothing (ContentDigest below).
#pragma once

#include <array>
#include <cstddef>
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

/// The size and a 64-bit hash of a byte stream, fed in pieces of any size; the same digest
/// whatever the pieces. The hash takes 32 octets at a time as four little-endian words, each into
/// a lane of its own (xor, multiply by an odd constant, rotate), and mixes the lanes with the
/// length at the end. Every step of both is a bijection, so two streams of one length that differ
/// within a single 8-octet word never share a digest (why the mix is not mum() of mix.hpp, which
/// the name hashes use: a 128-bit product folded to 64 bits is not one). Four lanes keep four
/// multiplies in flight: 2 ms for a 17.5 MB list, where the byte-wise FNV-1a it replaced (one
/// dependent multiply per octet) took 20 ms of the daemon's start-up.
class ContentDigest {
public:
    void add(std::string_view piece) noexcept;
    [[nodiscard]] std::uint64_t bytes() const noexcept { return bytes_; }
    /// The hash of every octet so far (the stream may go on after it is read).
    [[nodiscard]] std::uint64_t hash() const noexcept;

    static constexpr std::size_t kBlock = 32;

private:
    std::array<std::uint64_t, 4> lanes_{0x243F6A8885A308D3ULL, 0x13198A2E03707344ULL,
                                        0xA4093822299F31D0ULL, 0x082EFA98EC4E6C89ULL};
    std::array<char, kBlock> partial_{};  ///< the octets of a block not yet whole
    std::size_t partial_size_ = 0;
    std::uint64_t bytes_ = 0;
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
