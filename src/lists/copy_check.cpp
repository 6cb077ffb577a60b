#include "moat/lists/copy_check.hpp"

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
        text += " (FNV-1a " + hex(hash) + ")";
    }
    return text;
}

}  // namespace

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
    // Statuses written before hashes were recorded hold 0: their size is all there is to check.
    const bool with_hash = status.content_hash != 0;
    const std::string expected =
        "expected " + describe(status.bytes, status.content_hash, with_hash);
    if (!found) {
        return expected + ", found a copy that cannot be read";
    }
    if (found->bytes == status.bytes && (!with_hash || found->hash == status.content_hash)) {
        return {};
    }
    return expected + ", found " + describe(found->bytes, found->hash, with_hash);
}

}  // namespace moat::lists
