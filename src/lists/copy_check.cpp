#include "moat/lists/copy_check.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace moat::lists {
namespace {

constexpr std::size_t kChunk = std::size_t{64} * 1024;  // the compiler reads in pieces this size

std::string hex(std::uint64_t value) {
    constexpr std::string_view kDigits = "0123456789abcdef";
    std::string text = "0x";
    for (int shift = 60; shift >= 0; shift -= 4) {
        text.push_back(kDigits[(value >> static_cast<unsigned>(shift)) & 0xFU]);
    }
    return text;
}

std::string describe(std::uint64_t bytes, std::uint64_t hash, bool with_hash) {
    std::string text = std::to_string(bytes) + " bytes";
    if (with_hash) {
        text += " (hash " + hex(hash) + ")";
    }
    return text;
}

constexpr std::uint64_t kLaneMultiplier = 0x9E3779B97F4A7C15ULL;  // odd: a bijection mod 2^64
constexpr std::uint64_t kMixMultiplier = 0xD6E8FEB86659FD93ULL;

/// The little-endian word at `p`, on any host: a copy digested on one machine is checked on
/// another when the state directory moves.
std::uint64_t load_le64(const char* p) noexcept {
    std::uint64_t word = 0;
    std::memcpy(&word, p, sizeof(word));
    if constexpr (std::endian::native == std::endian::big) {
        word = __builtin_bswap64(word);
    }
    return word;
}

/// One block into the four lanes. Each lane's step (xor, multiply, rotate) is a bijection.
void digest_block(std::array<std::uint64_t, 4>& lanes, const char* block) noexcept {
    for (std::size_t i = 0; i < lanes.size(); ++i) {
        const std::uint64_t mixed = (lanes[i] ^ load_le64(block + i * 8)) * kLaneMultiplier;
        lanes[i] = std::rotl(mixed, 29);
    }
}

/// Spreads every bit of `x` over the whole word (a bijection: xor-shifts and odd multiplies).
std::uint64_t avalanche(std::uint64_t x) noexcept {
    x ^= x >> 32U;
    x *= kMixMultiplier;
    x ^= x >> 29U;
    x *= kLaneMultiplier;
    x ^= x >> 32U;
    return x;
}

}  // namespace

void ContentDigest::add(std::string_view piece) noexcept {
    if (piece.empty()) {
        return;  // its data() may be null, which memcpy must not see even for no octets
    }
    bytes_ += piece.size();
    const char* p = piece.data();
    std::size_t left = piece.size();
    if (partial_size_ > 0) {
        const std::size_t take = std::min(left, kBlock - partial_size_);
        std::memcpy(partial_.data() + partial_size_, p, take);
        partial_size_ += take;
        p += take;
        left -= take;
        if (partial_size_ < kBlock) {
            return;
        }
        digest_block(lanes_, partial_.data());
        partial_size_ = 0;
    }
    for (; left >= kBlock; p += kBlock, left -= kBlock) {
        digest_block(lanes_, p);
    }
    std::memcpy(partial_.data(), p, left);
    partial_size_ = left;
}

std::uint64_t ContentDigest::hash() const noexcept {
    std::array<std::uint64_t, 4> lanes = lanes_;
    if (partial_size_ > 0) {  // zero-padded: the length mixed in below tells the padding apart
        std::array<char, kBlock> last{};
        std::memcpy(last.data(), partial_.data(), partial_size_);
        digest_block(lanes, last.data());
    }
    std::uint64_t h = avalanche(bytes_ ^ kMixMultiplier);
    for (const std::uint64_t lane : lanes) {
        h = avalanche(h ^ lane) + kLaneMultiplier;
    }
    return h;
}

DigestingReader::DigestingReader(const std::filesystem::path& path)
    : file_(std::fopen(path.c_str(), "rb"), &std::fclose) {}

DigestingReader::int_type DigestingReader::underflow() {
    if (gptr() < egptr()) {
        return traits_type::to_int_type(*gptr());
    }
    if (!file_ || failed_) {
        return traits_type::eof();
    }
    buffer_.resize(kChunk);
    const std::size_t got = std::fread(buffer_.data(), 1, buffer_.size(), file_.get());
    if (got == 0) {
        failed_ = std::ferror(file_.get()) != 0;
        return traits_type::eof();
    }
    // Digested as it enters the buffer: finish() reads on from the end of the buffer, so every
    // byte of the file is counted once whatever the stream's reader consumed.
    digest_.add(std::string_view(buffer_.data(), got));
    setg(buffer_.data(), buffer_.data(), buffer_.data() + got);
    return traits_type::to_int_type(buffer_.front());
}

std::optional<ContentDigest> DigestingReader::finish() {
    if (!file_) {
        return std::nullopt;
    }
    setg(buffer_.data(), buffer_.data(), buffer_.data());  // what is buffered is digested
    while (underflow() != traits_type::eof()) {
        setg(buffer_.data(), egptr(), egptr());
    }
    if (failed_) {
        return std::nullopt;
    }
    return digest_;
}

std::optional<ContentDigest> digest_file(const std::filesystem::path& path) {
    DigestingReader reader(path);
    return reader.finish();
}

std::string copy_mismatch(const ListStatus& status, const std::optional<ContentDigest>& found) {
    if (!status.has_copy()) {
        return {};
    }
    // Statuses written before this hash was recorded hold 0 (list_status.cpp): their size is all
    // there is to check.
    const bool with_hash = status.content_hash != 0;
    const std::string expected =
        "expected " + describe(status.bytes, status.content_hash, with_hash);
    if (!found) {
        return expected + ", found a copy that cannot be read";
    }
    if (found->bytes() == status.bytes && (!with_hash || found->hash() == status.content_hash)) {
        return {};
    }
    return expected + ", found " + describe(found->bytes(), found->hash(), with_hash);
}

}  // namespace moat::lists
