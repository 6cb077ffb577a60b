// Names: presentation-format parsing and printing (Name), the compressed-name decoder with every
// limit and error offset (decode_name, skip_name), and NameView's walk, copies and comparisons.
#include "moat/wire/name.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "moat/wire/name_decoder.hpp"
#include "moat/wire/types.hpp"
#include "moat/wire/wire_error.hpp"
#include "support/shared_data.hpp"
#include "unit/support/wire_corpus.hpp"
#include "unit/support/wire_writer.hpp"

namespace {

using moat::test::WireWriter;
using moat::wire::Compression;
using moat::wire::decode_name;
using moat::wire::Errc;
using moat::wire::Name;
using moat::wire::NameView;
using moat::wire::SuffixCache;
using moat::wire::WireError;
using Bytes = std::vector<std::uint8_t>;

Bytes wire_of(const Name& n) { return {n.wire().begin(), n.wire().end()}; }

Name text_name(std::string_view text) {
    auto n = Name::from_text(text);
    EXPECT_TRUE(n.has_value()) << text;
    return n ? *n : Name{};
}

std::string label(std::size_t n, char c) {
    // Parentheses, not braces: {n, c} would be the two characters n and c.
    return std::string(n, c);  // NOLINT(modernize-return-braced-init-list)
}

// ---------------------------------------------------------------------------------------------
// Name::from_text / to_text

TEST(NameFromText, PlainNameWithAndWithoutTrailingDot) {
    const Bytes want{3, 'w', 'w', 'w', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0};
    for (const char* text : {"www.example.com", "www.example.com."}) {
        auto n = Name::from_text(text);
        ASSERT_TRUE(n) << text;
        EXPECT_EQ(wire_of(*n), want);
        EXPECT_EQ(n->length(), 17U);
        EXPECT_EQ(n->label_count(), 3U);
        EXPECT_EQ(n->to_text(), "www.example.com.");
    }
}

TEST(NameFromText, RootForms) {
    for (const char* text : {"", "."}) {
        auto n = Name::from_text(text);
        ASSERT_TRUE(n) << text;
        EXPECT_EQ(wire_of(*n), Bytes{0});
        EXPECT_EQ(n->label_count(), 0U);
        EXPECT_TRUE(n->view().is_root());
        EXPECT_EQ(n->to_text(), ".");
    }
    EXPECT_EQ(Name{}.to_text(), ".");
    EXPECT_EQ(Name{}.length(), 1U);
}

TEST(NameFromText, Escapes) {
    auto dot = Name::from_text("a\\.b.c");
    ASSERT_TRUE(dot);
    EXPECT_EQ(wire_of(*dot), (Bytes{3, 'a', '.', 'b', 1, 'c', 0}));
    EXPECT_EQ(dot->label_count(), 2U);
    EXPECT_EQ(dot->to_text(), "a\\.b.c.");

    auto dec = Name::from_text(R"(\065bc.\000\255)");
    ASSERT_TRUE(dec);
    EXPECT_EQ(wire_of(*dec), (Bytes{3, 'A', 'b', 'c', 2, 0, 255, 0}));
    EXPECT_EQ(dec->to_text(), "Abc.\\000\\255.");

    auto backslash = Name::from_text("a\\\\b");
    ASSERT_TRUE(backslash);
    EXPECT_EQ(wire_of(*backslash), (Bytes{3, 'a', '\\', 'b', 0}));
}

TEST(NameFromText, BadEscapes) {
    struct Case {
        const char* text;
        std::uint32_t offset;
    };
    for (const Case c : {Case{"\\256", 0}, Case{"ab\\06", 2}, Case{"a\\", 1}, Case{"\\0x1", 0},
                         Case{"x.\\99", 2}}) {
        auto n = Name::from_text(c.text);
        ASSERT_FALSE(n) << c.text;
        EXPECT_EQ(n.error(), (WireError{Errc::bad_text, c.offset})) << c.text;
    }
}

TEST(NameFromText, EmptyLabelsAreRejected) {
    struct Case {
        const char* text;
        std::uint32_t offset;
    };
    for (const Case c : {Case{"a..b", 2}, Case{".a", 0}, Case{"a..", 2}, Case{"..", 0}}) {
        auto n = Name::from_text(c.text);
        ASSERT_FALSE(n) << c.text;
        EXPECT_EQ(n.error(), (WireError{Errc::bad_text, c.offset})) << c.text;
    }
}

TEST(NameFromText, LabelOf63OctetsIsTheLimit) {
    auto ok = Name::from_text(label(63, 'a') + ".com");
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok->wire()[0], 63);
    EXPECT_EQ(ok->length(), 1U + 63U + 4U + 1U);

    auto too_long = Name::from_text(label(64, 'a') + ".com");
    ASSERT_FALSE(too_long);
    EXPECT_EQ(too_long.error(), (WireError{Errc::bad_text, 63}));
    // An escape counts as one octet.
    auto escaped = Name::from_text(label(62, 'a') + "\\065");
    ASSERT_TRUE(escaped);
    EXPECT_EQ(escaped->wire()[0], 63);
}

TEST(NameFromText, NameOf255OctetsIsTheLimit) {
    // 3 x (1 + 63) + (1 + 61) + root = 255 octets.
    const std::string base = label(63, 'a') + "." + label(63, 'b') + "." + label(63, 'c') + ".";
    auto max = Name::from_text(base + label(61, 'd'));
    ASSERT_TRUE(max);
    EXPECT_EQ(max->length(), 255U);
    EXPECT_EQ(max->label_count(), 4U);
    EXPECT_TRUE(Name::from_text(base + label(61, 'd') + "."));

    // One more octet: 256. The 62nd octet of the last label (text offset 192 + 61) fails.
    auto over = Name::from_text(base + label(62, 'd'));
    ASSERT_FALSE(over);
    EXPECT_EQ(over.error(), (WireError{Errc::name_too_long, 253}));

    // 127 one-octet labels: 255 octets, the most labels a name can have.
    std::string many;
    for (int i = 0; i < 127; ++i) {
        many += "x.";
    }
    auto deep = Name::from_text(many);
    ASSERT_TRUE(deep);
    EXPECT_EQ(deep->length(), 255U);
    EXPECT_EQ(deep->label_count(), 127U);
    EXPECT_FALSE(Name::from_text(many + "y"));
}

TEST(NameToText, EscapesSpecialAndNonPrintableOctets) {
    const Bytes raw{7, 'a', ' ', '"', '(', ';', 0x7F, 0xC8, 3, '@', '$', '\\', 0};
    auto n = Name::from_wire(raw);
    ASSERT_TRUE(n);
    EXPECT_EQ(n->to_text(), "a\\032\\\"\\(\\;\\127\\200.\\@\\$\\\\.");
    auto back = Name::from_text(n->to_text());
    ASSERT_TRUE(back);
    EXPECT_EQ(wire_of(*back), raw);
}

TEST(NameToText, RoundTripsEveryOctetValueExactly) {
    // Every octet 0..255 appears in some label: text -> name must restore the exact octets (not
    // just a case-insensitively equal name). Names of 5 labels x 10 octets (+ one short label).
    for (unsigned first = 0; first < 256; first += 50) {
        Bytes wire;
        unsigned v = first;
        while (v < first + 50 && v < 256) {
            const unsigned n = std::min(10U, std::min(first + 50, 256U) - v);
            wire.push_back(static_cast<std::uint8_t>(n));
            for (unsigned k = 0; k < n; ++k) {
                wire.push_back(static_cast<std::uint8_t>(v++));
            }
        }
        wire.push_back(0);
        auto n = Name::from_wire(wire);
        ASSERT_TRUE(n) << first;
        auto back = Name::from_text(n->to_text());
        ASSERT_TRUE(back) << n->to_text();
        EXPECT_EQ(wire_of(*back), wire) << n->to_text();
    }
}

TEST(NameCopyLower, LowersAsciiLettersOnlyForEveryOctetValueAndLength) {
    // The contiguous fast path lowers eight octets at a time: every octet value at every
    // position of a word, and every tail length, must match the one-octet rule.
    for (unsigned shift = 0; shift < 18; ++shift) {
        Bytes wire;
        Bytes expect;
        const unsigned first = shift % 2 == 0 ? 0 : 128;  // half the octet values per name
        unsigned v = first;
        while (v < first + 128) {
            const unsigned n = std::min(37U + shift / 2, first + 128 - v);
            wire.push_back(static_cast<std::uint8_t>(n));
            expect.push_back(static_cast<std::uint8_t>(n));
            for (unsigned k = 0; k < n; ++k, ++v) {
                const auto c = static_cast<std::uint8_t>(v);
                wire.push_back(c);
                expect.push_back(c >= 'A' && c <= 'Z' ? static_cast<std::uint8_t>(c | 0x20) : c);
            }
        }
        wire.push_back(0);
        expect.push_back(0);
        auto n = Name::from_wire(wire);
        ASSERT_TRUE(n) << shift;
        Bytes out(wire.size() + 8, 0xEE);
        ASSERT_EQ(n->view().copy_lower_to(out.data()), wire.size());
        EXPECT_EQ(Bytes(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(wire.size())),
                  expect);
        EXPECT_EQ(out[wire.size()], 0xEE) << "wrote past the name";
    }
}

TEST(NameEquality, IsCaseInsensitiveForAsciiLettersOnly) {
    EXPECT_EQ(text_name("WWW.Example.COM"), text_name("www.example.com."));
    EXPECT_FALSE(text_name("www.example.com") == text_name("www.example.org"));
    EXPECT_FALSE(text_name("www.example.com") == text_name("ww.wexample.com"));
    EXPECT_FALSE(text_name("www.example.com") == text_name("example.com"));
    // '@' (0x40) and '`' (0x60) differ only in bit 0x20 but are not letters.
    EXPECT_FALSE(text_name("\\064") == text_name("\\096"));
    EXPECT_FALSE(text_name("[") == text_name("{"));
    // Octets >= 0x80 compare exactly.
    EXPECT_FALSE(text_name("\\200") == text_name("\\232"));
    EXPECT_EQ(text_name("\\200"), text_name("\\200"));
}

// ---------------------------------------------------------------------------------------------
// Name::from_wire / from_view

TEST(NameFromWire, AcceptsExactlyOneUncompressedName) {
    auto ok = Name::from_wire(Bytes{1, 'a', 0});
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok->label_count(), 1U);

    EXPECT_EQ(Name::from_wire(Bytes{1, 'a', 0, 0}).error(), (WireError{Errc::trailing_data, 3}));
    EXPECT_EQ(Name::from_wire(Bytes{1, 'a'}).error(), (WireError{Errc::name_overrun, 2}));
    EXPECT_EQ(Name::from_wire(Bytes{}).error(), (WireError{Errc::name_overrun, 0}));
    EXPECT_EQ(Name::from_wire(Bytes{1, 'a', 0xC0, 0}).error(),
              (WireError{Errc::bad_label_type, 2}));
    EXPECT_EQ(Name::from_wire(Bytes{0x40, 0}).error(), (WireError{Errc::bad_label_type, 0}));

    Bytes long_name;
    for (int i = 0; i < 4; ++i) {
        long_name.push_back(63);
        long_name.insert(long_name.end(), 63, 'x');
    }
    long_name.push_back(0);
    EXPECT_EQ(Name::from_wire(long_name).error().code, Errc::name_too_long);
}

// ---------------------------------------------------------------------------------------------
// decode_name

// A message of a 12-byte header and then `body`.
Bytes message(std::initializer_list<unsigned> body) {
    WireWriter w(0, 0, 0, 0);
    w.raw(body);
    return w.take();
}

tl::expected<moat::wire::NameInfo, WireError> decode(const Bytes& msg, std::size_t pos,
                                                     SuffixCache* cache = nullptr) {
    return decode_name(msg, pos, msg.size(), cache);
}

TEST(DecodeName, PlainAndCompressed) {
    // 12: example.com.   25: www -> 12   31: pointer straight to 12
    const Bytes msg = message({7,    'e', 'x', 'a', 'm',  'p', 'l', 'e', 3, 'c', 'o', 'm', 0,  //
                               3,    'w', 'w', 'w', 0xC0, 12,                                  //
                               0xC0, 12});
    auto plain = decode(msg, 12);
    ASSERT_TRUE(plain);
    EXPECT_EQ(plain->end, 25);
    EXPECT_EQ(plain->hops, 0);
    EXPECT_EQ(plain->view.length(), 13U);
    EXPECT_EQ(plain->view.label_count(), 2U);
    EXPECT_EQ(plain->view.to_text(), "example.com.");

    auto www = decode(msg, 25);
    ASSERT_TRUE(www);
    EXPECT_EQ(www->end, 31);
    EXPECT_EQ(www->hops, 1);
    EXPECT_EQ(www->view.offset(), 25);
    EXPECT_EQ(www->view.length(), 17U);
    EXPECT_EQ(www->view.label_count(), 3U);
    EXPECT_EQ(www->view.to_text(), "www.example.com.");

    auto bare = decode(msg, 31);
    ASSERT_TRUE(bare);
    EXPECT_EQ(bare->end, 33);
    EXPECT_EQ(bare->hops, 1);
    EXPECT_TRUE(bare->view.iequals(plain->view));
}

// A decoded view knows whether its name has a pointer: one without is read in place, and a
// copy or a lowered copy of either is the whole name. Views that know and views that do not
// compare by their names alone.
TEST(DecodeName, AViewKnowsWhetherItsNameIsContiguous) {
    // 12: Example.COM.   25: Www -> 12
    const Bytes msg = message({7, 'E', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'C', 'O', 'M', 0,  //
                               3, 'W', 'w', 'w', 0xC0, 12});
    SuffixCache cache;
    for (SuffixCache* c : {static_cast<SuffixCache*>(nullptr), &cache}) {
        auto plain = decode(msg, 12, c);
        auto www = decode(msg, 25, c);
        ASSERT_TRUE(plain && www);
        EXPECT_TRUE(plain->view.known_contiguous());
        EXPECT_FALSE(www->view.known_contiguous());
        const auto in_place = plain->view.contiguous_wire();
        ASSERT_EQ(in_place.size(), 13U);
        EXPECT_EQ(in_place.data(), msg.data() + 12) << "read in place, not copied";
        EXPECT_TRUE(www->view.contiguous_wire().empty());

        std::array<std::uint8_t, moat::wire::kMaxNameLength> buf{};
        ASSERT_EQ(www->view.copy_lower_to(buf.data()), 17U);
        const std::vector<std::uint8_t> lowered(buf.begin(), buf.begin() + 17);
        EXPECT_EQ(lowered, (std::vector<std::uint8_t>{3, 'w', 'w', 'w', 7, 'e', 'x', 'a', 'm', 'p',
                                                      'l', 'e', 3, 'c', 'o', 'm', 0}));
        ASSERT_EQ(plain->view.copy_to(buf.data()), 13U);
        EXPECT_TRUE(std::equal(in_place.begin(), in_place.end(), buf.begin()));

        const Name owned = *Name::from_text("www.example.com");
        EXPECT_TRUE(owned.view().known_contiguous());
        EXPECT_TRUE(www->view.iequals(owned.view()));
        EXPECT_TRUE(owned.view().iequals(www->view));
        EXPECT_EQ(www->view.label_count(), owned.view().label_count());
        EXPECT_EQ(www->view.label_count(), 3U);
    }
}

TEST(DecodeName, NameOverrun) {
    // A label running past the end: the walk stops at the first offset past the data.
    EXPECT_EQ(decode(message({3, 'a', 'b'}), 12).error(), (WireError{Errc::name_overrun, 16}));
    // No root label before the end.
    EXPECT_EQ(decode(message({1, 'a'}), 12).error(), (WireError{Errc::name_overrun, 14}));
    // Nothing at all.
    EXPECT_EQ(decode(message({}), 12).error(), (WireError{Errc::name_overrun, 12}));
    // A pointer cut in half.
    EXPECT_EQ(decode(message({1, 'a', 0xC0}), 12).error(), (WireError{Errc::name_overrun, 14}));
    // Inside RDATA the limit is the RDATA end, even when the message goes on.
    const Bytes msg = message({1, 'a', 0, 0});
    EXPECT_EQ(decode_name(msg, 12, 14, nullptr).error(), (WireError{Errc::name_overrun, 14}));
    EXPECT_EQ(decode_name(msg, 12, 15, nullptr)->end, 15);
    // A pointer whose second octet is beyond the RDATA end.
    const Bytes ptr = message({0, 0xC0, 12, 0});
    EXPECT_EQ(decode_name(ptr, 13, 14, nullptr).error(), (WireError{Errc::name_overrun, 13}));
    EXPECT_TRUE(decode_name(ptr, 13, 15, nullptr));
    // After a pointer the limit is the message end: the name pointed at may run past the RDATA.
    // 12: a + a 2-octet label + root; the name at 15 (RDATA [15, 17)) points to 12.
    const Bytes back = message({1, 'a', 2, 0xC0, 12, 0});
    auto behind = decode_name(back, 15, 17, nullptr);
    ASSERT_TRUE(behind);
    EXPECT_EQ(behind->end, 17);
    EXPECT_EQ(behind->view.length(), 6U);
    EXPECT_EQ(behind->view.label_count(), 2U);
}

TEST(DecodeName, BadLabelTypes) {
    EXPECT_EQ(decode(message({0x40, 0}), 12).error(), (WireError{Errc::bad_label_type, 12}));
    EXPECT_EQ(decode(message({0x80, 0}), 12).error(), (WireError{Errc::bad_label_type, 12}));
    EXPECT_EQ(decode(message({1, 'a', 0x41, 0}), 12).error(),
              (WireError{Errc::bad_label_type, 14}));
    EXPECT_EQ(decode(message({1, 'a', 0xBF, 0}), 12).error(),
              (WireError{Errc::bad_label_type, 14}));
    // Behind a pointer.
    EXPECT_EQ(decode(message({0x80, 0, 0xC0, 12}), 14).error(),
              (WireError{Errc::bad_label_type, 12}));
}

TEST(DecodeName, ForwardPointers) {
    // To itself.
    EXPECT_EQ(decode(message({0xC0, 12}), 12).error(), (WireError{Errc::forward_pointer, 12}));
    // Forwards.
    EXPECT_EQ(decode(message({0xC0, 14, 0}), 12).error(), (WireError{Errc::forward_pointer, 12}));
    // Into the header: never a name start (checked even though it points backwards).
    const Bytes into_header = message({0xC0, 0x05});
    EXPECT_EQ(decode(into_header, 12).error(), (WireError{Errc::forward_pointer, 12}));
    // Also through the cache's bare-pointer shortcut: offset 0 is what an empty slot's key holds.
    SuffixCache empty;
    auto to_zero = decode(message({0xC0, 0x00}), 12, &empty);
    ASSERT_FALSE(to_zero) << "decoded as " << to_zero->view.length() << " octets";
    EXPECT_EQ(to_zero.error(), (WireError{Errc::forward_pointer, 12}));
    // Into its own segment: back to the segment start, and into the middle of it.
    EXPECT_EQ(decode(message({1, 'a', 0xC0, 12}), 12).error(),
              (WireError{Errc::forward_pointer, 14}));
    EXPECT_EQ(decode(message({1, 'a', 1, 'b', 0xC0, 14}), 12).error(),
              (WireError{Errc::forward_pointer, 16}));
    // A two-name loop (the dns-zlip shape): 12: a -> 12 is fine to enter from 16, but the
    // pointer at 14 then targets the segment it is in.
    const Bytes loop = message({1, 'a', 0xC0, 12, 0xC0, 12});
    EXPECT_EQ(decode(loop, 16).error(), (WireError{Errc::forward_pointer, 14}));
    // Pointing backwards, but into the segment entered by the previous hop.
    const Bytes mid = message({1, 'a', 1, 'b', 0xC0, 14, 0xC0, 12});
    EXPECT_EQ(decode(mid, 18).error(), (WireError{Errc::forward_pointer, 16}));
    // The same with a cache gives the same error.
    SuffixCache cache;
    EXPECT_EQ(decode(mid, 18, &cache).error(), (WireError{Errc::forward_pointer, 16}));
}

// 12: root; then `count` pointers, each to the one before it (the first to 12).
Bytes pointer_chain(std::size_t count) {
    WireWriter w(0, 0, 0, 0);
    w.u8(0);
    for (std::size_t i = 0; i < count; ++i) {
        w.ptr(i == 0 ? 12 : 13 + 2 * (i - 1));
    }
    return w.take();
}

TEST(DecodeName, PointerHopLimit) {
    ASSERT_EQ(moat::wire::kMaxPointerHops, 128U);
    const Bytes ok = pointer_chain(128);
    const std::size_t last_ok = 13 + 2 * 127;
    auto name = decode(ok, last_ok);
    ASSERT_TRUE(name) << moat::wire::describe(name.error());
    EXPECT_EQ(name->hops, 128);
    EXPECT_TRUE(name->view.is_root());
    EXPECT_EQ(name->end, last_ok + 2);

    const Bytes over = pointer_chain(129);
    const std::size_t last = 13 + 2 * 128;
    // The 129th pointer followed is the first of the chain, at offset 13.
    EXPECT_EQ(decode(over, last).error(), (WireError{Errc::too_many_hops, 13}));
    SuffixCache cache;
    EXPECT_EQ(decode(over, last, &cache).error(), (WireError{Errc::too_many_hops, 13}));
    // Warm the cache along the chain; the cached totals must not let the chain through.
    for (std::size_t p = 13; p <= last; p += 2) {
        auto r = decode(over, p, &cache);
        if (p < last) {
            ASSERT_TRUE(r) << p;
        } else {
            EXPECT_EQ(r.error(), (WireError{Errc::too_many_hops, 13}));
        }
    }
}

TEST(DecodeName, TooLongInStreamAndThroughCompression) {
    // 12: 63a.63b.63c.61d. = 255 octets, valid.
    WireWriter w(0, 0, 0, 0);
    w.longest_name();
    const std::size_t second = w.size();  // x -> 12: 257 octets
    w.u8(1).u8('x').ptr(12);
    const std::size_t third = w.size();  // bare pointer to 12: 255 octets, valid
    w.ptr(12);
    const Bytes msg = w.take();

    auto max = decode(msg, 12);
    ASSERT_TRUE(max);
    EXPECT_EQ(max->view.length(), 255U);
    // The walk fails at the label that crosses 255: the 61-octet label at 12 + 192.
    EXPECT_EQ(decode(msg, second).error(), (WireError{Errc::name_too_long, 204}));
    EXPECT_TRUE(decode(msg, third));
    SuffixCache cache;
    ASSERT_TRUE(decode(msg, 12, &cache));
    EXPECT_EQ(decode(msg, second, &cache).error(), (WireError{Errc::name_too_long, 204}));

    // In-stream: four 63-octet labels.
    WireWriter s(0, 0, 0, 0);
    for (int k = 0; k < 4; ++k) {
        s.u8(63);
        for (int i = 0; i < 63; ++i) {
            s.u8('q');
        }
    }
    s.u8(0);
    EXPECT_EQ(decode(s.bytes(), 12).error(), (WireError{Errc::name_too_long, 204}));
}

TEST(DecodeName, CompressionForbidden) {
    const Bytes msg = message({1, 'a', 0, 1, 'b', 0xC0, 12});
    EXPECT_EQ(decode_name(msg, 15, msg.size(), nullptr, Compression::forbidden).error(),
              (WireError{Errc::compressed_in_rdata, 17}));
    EXPECT_TRUE(decode_name(msg, 12, msg.size(), nullptr, Compression::forbidden));
}

TEST(SkipName, WalksWithoutFollowingPointers) {
    const Bytes msg = message({1, 'a', 0, 1, 'b', 0xC0, 12, 0xC0, 0xFF});
    EXPECT_EQ(*moat::wire::skip_name(msg, 12, msg.size()), 15U);
    EXPECT_EQ(*moat::wire::skip_name(msg, 15, msg.size()), 19U);
    // A forward pointer is not its business.
    EXPECT_EQ(*moat::wire::skip_name(msg, 19, msg.size()), 21U);
    EXPECT_EQ(moat::wire::skip_name(msg, 19, 20).error(), (WireError{Errc::name_overrun, 19}));
    EXPECT_EQ(moat::wire::skip_name(message({0x40}), 12, 13).error(),
              (WireError{Errc::bad_label_type, 12}));
    EXPECT_EQ(moat::wire::skip_name(message({2, 'a'}), 12, 14).error(),
              (WireError{Errc::name_overrun, 15}));
}

// ---------------------------------------------------------------------------------------------
// The single names of Knot's fuzz_dname_to_str corpus.

TEST(DecodeName, KnotDnameCorpus) {
    MOAT_SHARED_PATH_OR_SKIP(dir, "data/wire/knot-fuzz/dname_to_str");
    std::size_t files = 0;
    std::size_t decoded = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        const Bytes bytes = moat::test::read_bytes(entry.path());
        ++files;
        auto r = decode_name(bytes, 0, bytes.size(), nullptr);
        if (!r) {
            // Must be a real reason with an offset inside (or just past) the input.
            EXPECT_LE(r.error().offset, bytes.size()) << entry.path();
            continue;
        }
        ++decoded;
        EXPECT_LE(r->end, bytes.size());
        EXPECT_EQ(r->hops, 0);
        const Name name = Name::from_view(r->view);
        EXPECT_EQ(name.length(), r->view.length());
        // The whole file is one uncompressed name: from_wire agrees on the bytes it spans.
        auto direct = Name::from_wire(std::span<const std::uint8_t>(bytes).first(r->end));
        ASSERT_TRUE(direct) << entry.path();
        EXPECT_EQ(wire_of(*direct), wire_of(name));
        // Text round trip restores the exact octets.
        auto back = Name::from_text(name.to_text());
        ASSERT_TRUE(back) << name.to_text();
        EXPECT_EQ(wire_of(*back), wire_of(name)) << entry.path();
    }
    EXPECT_EQ(files, 20U);
    // All 20 are valid names; dname020 is exactly 255 octets (four 49-octet labels and one of 53).
    EXPECT_EQ(decoded, 20U);
    const Bytes longest = moat::test::read_bytes(dir / "dname020.bin");
    auto max = decode_name(longest, 0, longest.size(), nullptr);
    ASSERT_TRUE(max);
    EXPECT_EQ(max->view.length(), 255U);
    EXPECT_EQ(max->view.label_count(), 5U);
}

// ---------------------------------------------------------------------------------------------
// NameView

TEST(NameView, IteratesLabelsAcrossPointers) {
    // 12: Example.COM.  25: WWW -> 12
    const Bytes msg = message({7, 'E', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'C', 'O', 'M', 0,  //
                               3, 'W', 'w', 'W', 0xC0, 12});
    auto info = decode(msg, 25);
    ASSERT_TRUE(info);
    std::vector<std::string> labels;
    for (const auto l : info->view) {
        labels.emplace_back(l.begin(), l.end());
    }
    EXPECT_EQ(labels, (std::vector<std::string>{"WwW", "Example", "COM"}));

    std::array<std::uint8_t, 255> out{};
    ASSERT_EQ(info->view.copy_to(out.data()), 17U);
    EXPECT_EQ(Bytes(out.begin(), out.begin() + 17),
              (Bytes{3, 'W', 'w', 'W', 7, 'E', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'C', 'O', 'M', 0}));
    ASSERT_EQ(info->view.copy_lower_to(out.data()), 17U);
    EXPECT_EQ(Bytes(out.begin(), out.begin() + 17),
              (Bytes{3, 'w', 'w', 'w', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0}));
    EXPECT_EQ(Name::from_view_lower(info->view).to_text(), "www.example.com.");
    EXPECT_EQ(Name::from_view(info->view).to_text(), "WwW.Example.COM.");
}

TEST(NameView, CopiesANameWithoutPointersWholeAndNoFurther) {
    // 12: Example.COM. (no pointer, copied in one piece), then bytes that are not the name's.
    const Bytes msg = message({7, 'E', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'C', 'O', 'M', 0,  //
                               0xAA, 0xBB});
    auto info = decode(msg, 12);
    ASSERT_TRUE(info);
    const Bytes name{7, 'E', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'C', 'O', 'M', 0};
    std::array<std::uint8_t, 20> out{};
    out.fill(0xEE);
    ASSERT_EQ(info->view.copy_to(out.data()), 13U);
    EXPECT_EQ(Bytes(out.begin(), out.begin() + 13), name);
    EXPECT_EQ(out[13], 0xEE) << "nothing written past the name";
    out.fill(0xEE);
    ASSERT_EQ(info->view.copy_lower_to(out.data()), 13U);
    EXPECT_EQ(Bytes(out.begin(), out.begin() + 13),
              (Bytes{7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0}));
    EXPECT_EQ(out[13], 0xEE);
}

TEST(NameView, RootView) {
    const NameView root;
    EXPECT_TRUE(root.is_root());
    EXPECT_EQ(root.length(), 1U);
    EXPECT_EQ(root.to_text(), ".");
    EXPECT_TRUE(root.begin() == root.end());
    std::array<std::uint8_t, 1> out{0xFF};
    EXPECT_EQ(root.copy_to(out.data()), 1U);
    EXPECT_EQ(out[0], 0);
    EXPECT_TRUE(root.iequals(Name{}.view()));
    EXPECT_TRUE(root.iequals(Bytes{0}));
    EXPECT_FALSE(root.iequals(Bytes{1, 'a', 0}));
}

TEST(NameView, IEquals) {
    // 12: example.com.  25: WWW.EXAMPLE.COM (in full)  42: www -> 12  48: ab.c.  53: a.bc.
    WireWriter w(0, 0, 0, 0);
    w.name("example.com").name("WWW.EXAMPLE.COM").raw({3, 'w', 'w', 'w'}).ptr(12);
    const std::size_t ab_c = w.size();
    w.name("ab.c");
    const std::size_t a_bc = w.size();
    w.name("a.bc");
    const Bytes msg = w.take();

    auto full = decode(msg, 25);
    auto compressed = decode(msg, 42);
    auto plain = decode(msg, 12);
    ASSERT_TRUE(full && compressed && plain);
    EXPECT_TRUE(full->view.iequals(compressed->view));
    EXPECT_TRUE(compressed->view.iequals(full->view));
    EXPECT_FALSE(full->view.iequals(plain->view));
    EXPECT_TRUE(compressed->view.iequals(moat::test::wire_name("www.Example.com")));
    EXPECT_FALSE(compressed->view.iequals(moat::test::wire_name("www.example.org")));
    EXPECT_FALSE(compressed->view.iequals(moat::test::wire_name("example.com")));

    // Same length and label count, different label boundaries.
    auto x = decode(msg, ab_c);
    auto y = decode(msg, a_bc);
    ASSERT_TRUE(x && y);
    EXPECT_EQ(x->view.length(), y->view.length());
    EXPECT_EQ(x->view.label_count(), y->view.label_count());
    EXPECT_FALSE(x->view.iequals(y->view));
    EXPECT_FALSE(x->view.iequals(moat::test::wire_name("a.bc")));
    EXPECT_TRUE(x->view.iequals(moat::test::wire_name("AB.C")));
}

}  // namespace
