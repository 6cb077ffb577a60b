// Recognising a damaged copy of a downloaded list: the digest (size and a 64-bit hash) tells
// apart copies that differ in one bit, one octet more or less, or two blocks swapped, is the same
// whatever pieces the bytes come in, the reader digests the whole file whatever its reader
// consumed, a copy that differs from its status is described (expected vs found), and a refresh
// of a copy that does not match sends no validators.
#include "moat/lists/copy_check.hpp"

#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <istream>
#include <string>

#include "moat/lists/refresh.hpp"
#include "support/temp_dir.hpp"

namespace moat::lists {
namespace {

using test::TempDir;

ContentDigest digest_of(std::string_view text) {
    ContentDigest d;
    d.add(text);
    return d;
}

void write(const std::filesystem::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

/// A list text longer than the reader's buffer, so reads cross chunk boundaries.
std::string long_list() {
    std::string text;
    for (int i = 0; text.size() < 200'000; ++i) {
        text += "ads" + std::to_string(i) + ".example.com\n";
    }
    return text;
}

ListStatus status_of(std::string_view text) {
    ListStatus s;
    s.name = "web";
    s.url = "http://lists.example/web.txt";
    s.last_changed = 1'795'000'000;
    s.entries = 2;
    const ContentDigest d = digest_of(text);
    s.bytes = d.bytes();
    s.content_hash = d.hash();
    s.etag = "\"v1\"";
    s.last_modified = "Mon, 30 Nov 2026 10:00:00 GMT";
    return s;
}

TEST(ContentDigest, IsTheRecordedHashOfTheBytes) {
    // Status files on users' disks hold these hashes: a change of the function would read every
    // intact copy as damaged. It must then come with a new status key (list_status.cpp).
    EXPECT_EQ(digest_of("").hash(), 0x5e9f5c335c8b9fb6ULL);
    EXPECT_EQ(digest_of("a").hash(), 0xe0f2b4e91df0169eULL);
    EXPECT_EQ(digest_of("ads.example.com\ntracker.example.net\n").hash(), 0xb421b9406a53c398ULL);
    EXPECT_EQ(digest_of("foobar").bytes(), 6U);
}

TEST(ContentDigest, EveryBitOfTheBytesCounts) {
    const std::string text = long_list().substr(0, 300);
    const std::uint64_t whole = digest_of(text).hash();
    for (std::size_t at = 0; at < text.size(); ++at) {
        for (int bit = 0; bit < 8; ++bit) {
            std::string flipped = text;
            flipped[at] = static_cast<char>(flipped[at] ^ (1 << bit));
            ASSERT_NE(digest_of(flipped).hash(), whole) << "octet " << at << " bit " << bit;
        }
    }
}

TEST(ContentDigest, TheLengthCountsAndBlocksKeepTheirOrder) {
    const std::string text = long_list().substr(0, 96);  // three whole blocks
    const std::uint64_t whole = digest_of(text).hash();
    for (std::size_t size = 0; size < text.size(); ++size) {
        ASSERT_NE(digest_of(text.substr(0, size)).hash(), whole) << size;
    }
    // The last block is zero-padded inside the hash: zeros that are really there differ.
    EXPECT_NE(digest_of(text + std::string(1, '\0')).hash(), whole);
    EXPECT_NE(digest_of("abc").hash(), digest_of(std::string("abc\0", 4)).hash());
    const std::string swapped = text.substr(32, 32) + text.substr(0, 32) + text.substr(64);
    EXPECT_NE(digest_of(swapped).hash(), whole);
}

TEST(ContentDigest, PiecesOfAnySizeGiveTheSameDigest) {
    const std::string text = long_list();
    const ContentDigest whole = digest_of(text);
    for (const std::size_t piece : {1U, 7U, 31U, 32U, 33U, 777U, 65536U}) {
        ContentDigest pieces;
        for (std::size_t at = 0; at < text.size(); at += piece) {
            pieces.add(std::string_view(text).substr(at, piece));
        }
        EXPECT_EQ(pieces.hash(), whole.hash()) << piece;
        EXPECT_EQ(pieces.bytes(), text.size()) << piece;
    }
    // Every split of a short text in two, across and on the blocks' edges.
    const std::string_view shorter = std::string_view(text).substr(0, 100);
    for (std::size_t cut = 0; cut <= shorter.size(); ++cut) {
        ContentDigest two;
        two.add(shorter.substr(0, cut));
        two.add(shorter.substr(cut));
        ASSERT_EQ(two.hash(), digest_of(shorter).hash()) << cut;
    }
}

TEST(ContentDigest, ReadingTheHashDoesNotEndTheStream) {
    ContentDigest d;
    d.add(std::string_view());  // no octets, and a null data()
    d.add("ads.example.com\n");
    (void)d.hash();
    d.add("tracker.example.net\n");
    EXPECT_EQ(d.hash(), digest_of("ads.example.com\ntracker.example.net\n").hash());
}

TEST(DigestingReader, HandsOutTheFileAndDigestsAllOfIt) {
    const TempDir tmp;
    const std::string text = long_list();
    write(tmp.path() / "copy.list", text);
    DigestingReader reader(tmp.path() / "copy.list");
    ASSERT_TRUE(reader.is_open());
    std::istream in(&reader);
    // A read loop, not istreambuf_iterator: GCC 12 at -O2 (the aarch64 build) warns falsely of
    // a null dereference inside the latter.
    std::string read_back;
    std::array<char, 4096> chunk{};
    while (in.read(chunk.data(), chunk.size()) || in.gcount() > 0) {
        read_back.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    }
    EXPECT_EQ(read_back, text);
    const auto digest = reader.finish();
    ASSERT_TRUE(digest);
    EXPECT_EQ(digest->bytes(), text.size());
    EXPECT_EQ(digest->hash(), digest_of(text).hash());
}

TEST(DigestingReader, FinishDigestsWhatTheStreamsReaderLeft) {
    const TempDir tmp;
    const std::string text = long_list();
    write(tmp.path() / "copy.list", text);
    DigestingReader reader(tmp.path() / "copy.list");
    std::istream in(&reader);
    std::string first;
    std::getline(in, first);
    EXPECT_EQ(first, "ads0.example.com");
    const auto digest = reader.finish();
    ASSERT_TRUE(digest);
    EXPECT_EQ(digest->bytes(), text.size());
    EXPECT_EQ(digest->hash(), digest_of(text).hash());
    EXPECT_EQ(digest_file(tmp.path() / "copy.list")->hash(), digest->hash());
}

TEST(DigestingReader, AMissingFileHasNoDigest) {
    const TempDir tmp;
    DigestingReader reader(tmp.path() / "missing.list");
    EXPECT_FALSE(reader.is_open());
    EXPECT_FALSE(reader.finish());
    EXPECT_FALSE(digest_file(tmp.path() / "missing.list"));
}

TEST(CopyMismatch, TheCopyTheStatusRecordedMatches) {
    const ListStatus s = status_of("a.com\nb.com\n");
    EXPECT_EQ(copy_mismatch(s, digest_of("a.com\nb.com\n")), "");
}

TEST(CopyMismatch, ATruncatedCopyIsDescribedExpectedAgainstFound) {
    const ListStatus s = status_of("a.com\nb.com\n");
    const std::string why = copy_mismatch(s, digest_of("a.com\nb."));
    EXPECT_NE(why.find("expected 12 bytes"), std::string::npos) << why;
    EXPECT_NE(why.find("found 8 bytes"), std::string::npos) << why;
    EXPECT_NE(why.find("(hash 0x"), std::string::npos) << why;
}

TEST(CopyMismatch, JunkOfTheSameSizeIsNoticedByTheHash) {
    const ListStatus s = status_of("a.com\nb.com\n");
    const std::string why = copy_mismatch(s, digest_of("a.com\n\x01\xff\x7f#zz"));
    EXPECT_FALSE(why.empty());
    EXPECT_NE(why.find("found 12 bytes"), std::string::npos) << why;
}

TEST(CopyMismatch, AStatusWithoutAHashIsCheckedBySize) {
    ListStatus s = status_of("a.com\nb.com\n");
    s.content_hash = 0;  // written before this hash was recorded
    EXPECT_EQ(copy_mismatch(s, digest_of("x.com\ny.com\n")), "");
    const std::string why = copy_mismatch(s, digest_of("a.com\n"));
    EXPECT_NE(why.find("expected 12 bytes, found 6 bytes"), std::string::npos) << why;
}

TEST(CopyMismatch, AnUnreadableCopyNeverMatchesAndNoCopyIsNeverChecked) {
    const ListStatus s = status_of("a.com\nb.com\n");
    EXPECT_NE(copy_mismatch(s, std::nullopt).find("cannot be read"), std::string::npos);
    EXPECT_EQ(copy_mismatch(ListStatus{}, digest_of("anything")), "");
}

TEST(ConditionalValidators, AMatchingCopySendsItsValidators) {
    const ListStatus s = status_of("a.com\n");
    const Validators v = conditional_validators(s, true);
    EXPECT_EQ(v.etag, "\"v1\"");
    EXPECT_EQ(v.last_modified, "Mon, 30 Nov 2026 10:00:00 GMT");
}

TEST(ConditionalValidators, ADamagedCopySendsNoneSoTheWholeListComes) {
    const Validators v = conditional_validators(status_of("a.com\n"), false);
    EXPECT_EQ(v.etag, "");
    EXPECT_EQ(v.last_modified, "");
}

}  // namespace
}  // namespace moat::lists
