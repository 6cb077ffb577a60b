// The compression table must find exactly what was added, whether it is still scanning its nodes
// or has built its hash index (past kLinearNodes), through rollbacks across that line and resets
// of a table that had an index: a long random run is checked step by step against a plain list.
#include "moat/wire/compression_table.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "moat/wire/types.hpp"

namespace {

using moat::wire::CompressionTable;

/// The output a builder would be writing: labels at growing offsets, as the table expects.
class Output {
public:
    Output() : bytes_(moat::wire::kMaxPointerOffset + 256, 0) {}
    /// Writes `label` (length octet first) and returns its offset.
    std::uint16_t write(const std::string& label) {
        const auto at = static_cast<std::uint16_t>(next_);
        bytes_[next_++] = static_cast<std::uint8_t>(label.size());
        std::copy(label.begin(), label.end(), bytes_.begin() + static_cast<std::ptrdiff_t>(next_));
        next_ += label.size();
        return at;
    }
    void restart() { next_ = moat::wire::kHeaderSize; }
    [[nodiscard]] bool has_room() const { return next_ + 64 <= moat::wire::kMaxPointerOffset; }
    [[nodiscard]] const std::uint8_t* data() const { return bytes_.data(); }

private:
    std::vector<std::uint8_t> bytes_;
    std::size_t next_ = moat::wire::kHeaderSize;
};

std::vector<std::uint8_t> wire_label(const std::string& text) {
    // Sized once and filled in place: growing a one-octet vector by insert()
    // trips GCC 12's -Wstringop-overread false positive under -O3 with LTO
    // (GCC bugs 100366, 106199).
    std::vector<std::uint8_t> label(text.size() + 1);
    label[0] = static_cast<std::uint8_t>(text.size());
    std::copy(text.begin(), text.end(), label.begin() + 1);
    return label;
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

/// What the table should hold: node n is entries[n - 1].
struct Reference {
    std::vector<std::pair<std::uint16_t, std::string>> entries;  // parent, lower-case label
    [[nodiscard]] std::uint16_t find(std::uint16_t parent, const std::string& label) const {
        for (std::size_t i = 0; i < entries.size(); ++i) {
            if (entries[i].first == parent && entries[i].second == lower(label)) {
                return static_cast<std::uint16_t>(i + 1);
            }
        }
        return CompressionTable::kRoot;
    }
};

TEST(CompressionTable, FindsWhatWasAddedBeforeAndAfterItsIndexIsBuilt) {
    CompressionTable table;
    Output out;
    std::vector<std::uint16_t> nodes;
    for (std::size_t i = 0; i < CompressionTable::kLinearNodes * 3; ++i) {
        const std::string text = "label" + std::to_string(i);
        const std::uint16_t offset = out.write(text);
        nodes.push_back(table.add(CompressionTable::kRoot, offset, out.data()));
        ASSERT_EQ(nodes.back(), i + 1);
        // Every node so far is found, in mixed case, under its parent only.
        for (std::size_t j = 0; j <= i; ++j) {
            auto label = wire_label("LABEL" + std::to_string(j));
            ASSERT_EQ(table.find(CompressionTable::kRoot, label.data(), out.data()), nodes[j])
                << "after " << i + 1 << " nodes";
            ASSERT_EQ(table.find(nodes[j], label.data(), out.data()), CompressionTable::kRoot);
        }
    }
    const auto absent = wire_label("label-absent");
    EXPECT_EQ(table.find(CompressionTable::kRoot, absent.data(), out.data()),
              CompressionTable::kRoot);
}

TEST(CompressionTable, MatchesAPlainListThroughAddsRollbacksAndResets) {
    std::mt19937 random(20261202U);
    // Few distinct labels, so the same label recurs under many parents.
    const std::vector<std::string> words{"a",   "b",        "www", "Example",
                                         "com", "cdn-edge", "x1",  "tracking",
                                         "ads", "net",      "org", "long-label-here"};
    CompressionTable table;
    Reference reference;
    Output out;
    std::size_t indexed_resets = 0;
    std::size_t indexed_steps = 0;  // steps taken with more nodes than a scan covers
    for (int step = 0; step < 20000; ++step) {
        indexed_steps += reference.entries.size() >= CompressionTable::kLinearNodes ? 1U : 0U;
        const auto op = random() % 100;
        const std::string& word = words[random() % words.size()];
        const auto parent = static_cast<std::uint16_t>(random() % (reference.entries.size() + 1));
        if (op < 65) {
            // A builder adds a label only when it was not found.
            const auto label = wire_label(word);
            const std::uint16_t found = table.find(parent, label.data(), out.data());
            ASSERT_EQ(found, reference.find(parent, word)) << "step " << step;
            if (found == CompressionTable::kRoot && out.has_room()) {
                const std::uint16_t n = table.add(parent, out.write(word), out.data());
                if (reference.entries.size() + 1 < CompressionTable::kMaxNodes) {
                    ASSERT_EQ(n, reference.entries.size() + 1) << "step " << step;
                    reference.entries.emplace_back(parent, lower(word));
                } else {
                    ASSERT_EQ(n, CompressionTable::kRoot) << "a full table remembers nothing";
                }
            }
        } else if (op < 95) {
            std::string mixed = word;
            for (char& c : mixed) {
                if (random() % 2 == 0) {
                    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
                }
            }
            const auto label = wire_label(mixed);
            ASSERT_EQ(table.find(parent, label.data(), out.data()), reference.find(parent, mixed))
                << "step " << step;
        } else if (op < 99) {
            const std::size_t keep = random() % (reference.entries.size() + 1);
            table.rollback(keep + 1);
            reference.entries.resize(keep);
            ASSERT_EQ(table.node_count(), keep + 1);
        } else {
            if (reference.entries.size() >= CompressionTable::kLinearNodes) {
                ++indexed_resets;
            }
            table.reset();
            reference.entries.clear();
            out.restart();
            ASSERT_EQ(table.node_count(), 1U);
        }
    }
    EXPECT_GT(indexed_resets, 0U) << "the run never reset a table that had built its index";
    EXPECT_GT(indexed_steps, 2000U) << "the run spent too little time with an index";
}

}  // namespace
