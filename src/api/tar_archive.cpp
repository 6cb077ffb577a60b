#include "moat/api/tar_archive.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <optional>

namespace moat::api {
namespace {

constexpr std::size_t kBlock = 512;
// Offsets and sizes of the ustar header fields used (POSIX.1-2001, pax "ustar" format).
constexpr std::size_t kName = 0;
constexpr std::size_t kNameSize = 100;
constexpr std::size_t kMode = 100;
constexpr std::size_t kUid = 108;
constexpr std::size_t kGid = 116;
constexpr std::size_t kSize = 124;
constexpr std::size_t kMtime = 136;
constexpr std::size_t kChecksum = 148;
constexpr std::size_t kType = 156;
constexpr std::size_t kMagic = 257;

void put_octal(std::string& block, std::size_t at, std::size_t width, unsigned long long value) {
    std::array<char, 32> text{};
    std::snprintf(text.data(), text.size(), "%0*llo", static_cast<int>(width - 1), value);
    std::copy_n(text.data(), width - 1, block.begin() + static_cast<std::ptrdiff_t>(at));
}

unsigned checksum_of(std::string_view block) {
    unsigned sum = 0;
    for (std::size_t i = 0; i < kBlock; ++i) {
        const bool in_field = i >= kChecksum && i < kChecksum + 8;
        sum += in_field ? unsigned{' '} : static_cast<unsigned char>(block[i]);
    }
    return sum;
}

std::optional<unsigned long long> read_octal(std::string_view field) {
    unsigned long long value = 0;
    bool any = false;
    for (const char c : field) {
        if (c == '\0' || c == ' ') {
            if (any) {
                break;
            }
            continue;
        }
        if (c < '0' || c > '7' || value > (~0ULL >> 3U)) {
            return std::nullopt;
        }
        value = value * 8 + static_cast<unsigned>(c - '0');
        any = true;
    }
    return value;
}

bool safe_name(std::string_view name) {
    if (name.empty() || name.size() > kNameSize || name.front() == '/') {
        return false;
    }
    std::size_t start = 0;
    while (start <= name.size()) {
        const std::size_t slash = std::min(name.find('/', start), name.size());
        const std::string_view part = name.substr(start, slash - start);
        if (part == ".." || part == ".") {
            return false;
        }
        start = slash + 1;
    }
    return std::none_of(name.begin(), name.end(),
                        [](char c) { return static_cast<unsigned char>(c) < 0x20; });
}

}  // namespace

std::string write_tar(const std::vector<TarFile>& files, long long mtime) {
    std::string out;
    for (const TarFile& f : files) {
        std::string header(kBlock, '\0');
        std::copy_n(f.name.data(), std::min(f.name.size(), kNameSize), header.begin());
        put_octal(header, kMode, 8, 0600);
        put_octal(header, kUid, 8, 0);
        put_octal(header, kGid, 8, 0);
        put_octal(header, kSize, 12, f.content.size());
        put_octal(header, kMtime, 12, static_cast<unsigned long long>(std::max(mtime, 0LL)));
        header[kType] = '0';
        const std::string_view magic(
            "ustar\0"
            "00",
            8);
        std::copy(magic.begin(), magic.end(), header.begin() + kMagic);
        put_octal(header, kChecksum, 7, checksum_of(header));
        header[kChecksum + 7] = ' ';
        out += header;
        out += f.content;
        out.append((kBlock - f.content.size() % kBlock) % kBlock, '\0');
    }
    out.append(2 * kBlock, '\0');
    return out;
}

tl::expected<std::vector<TarFile>, std::string> read_tar(std::string_view archive,
                                                         std::size_t max_files) {
    std::vector<TarFile> files;
    std::size_t at = 0;
    while (true) {
        if (at + kBlock > archive.size()) {
            return tl::unexpected(std::string("the archive is truncated (no end marker)"));
        }
        const std::string_view header = archive.substr(at, kBlock);
        if (std::all_of(header.begin(), header.end(), [](char c) { return c == '\0'; })) {
            return files;  // the end marker
        }
        const auto sum = read_octal(header.substr(kChecksum, 8));
        if (!sum || *sum != checksum_of(header)) {
            return tl::unexpected("not a tar archive (bad header checksum at byte " +
                                  std::to_string(at) + ")");
        }
        const auto size = read_octal(header.substr(kSize, 12));
        if (!size || *size > archive.size() - at - kBlock) {
            return tl::unexpected(std::string("the archive is truncated"));
        }
        const std::string_view raw_name = header.substr(kName, kNameSize);
        const std::string_view name = raw_name.substr(0, raw_name.find('\0'));
        const char type = header[kType];
        if (type == '0' || type == '\0') {
            if (!safe_name(name)) {
                return tl::unexpected("unsafe file name in the archive: \"" + std::string(name) +
                                      "\"");
            }
            if (files.size() >= max_files) {
                return tl::unexpected(std::string("too many files in the archive"));
            }
            files.push_back({std::string(name), std::string(archive.substr(at + kBlock, *size))});
        }
        at += kBlock + ((*size + kBlock - 1) / kBlock) * kBlock;
    }
}

}  // namespace moat::api
