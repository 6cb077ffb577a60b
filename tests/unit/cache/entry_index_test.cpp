// The shard's open-addressing index against a std::map model: inserts, finds and erases under
// heavy collisions (hashes confined to a few home slots), so the backward shift of erase() is
// exercised across runs that wrap around the end of the table.
#include "entry_index.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <new>
#include <random>
#include <vector>

#include "shard.hpp"

namespace moat::cache {
namespace {

/// An entry whose key is only its hash and one octet of name (enough for KeyRefEqual).
struct FakeEntry {
    Entry::Owner entry;
    std::uint8_t name = 0;

    FakeEntry(std::uint64_t hash, std::uint8_t id)
        : entry(Entry::make(::operator new(Entry::block_size(1)), 1)) {
        entry->storage()[0] = id;
        entry->name_length = 1;
        entry->key = KeyRef{entry->storage(), hash, 1, 1, 1, false, 0};
        name = id;
    }
    [[nodiscard]] KeyRef probe() const { return KeyRef{&name, entry->key.hash, 1, 1, 1, false, 0}; }
};

/// candidate(hash) names an entry of that hash when the model has one, and nothing otherwise.
void expect_candidate(const EntryIndex& index, const std::map<std::uint32_t, const Entry*>& model,
                      const std::vector<std::unique_ptr<FakeEntry>>& pool, std::uint64_t hash) {
    bool any = false;
    for (const auto& [id, entry] : model) {
        any = any || pool[id]->entry->key.hash == hash;
    }
    const std::uint8_t* const found = index.candidate(hash);
    ASSERT_EQ(found != nullptr, any) << "hash " << hash;
    if (found != nullptr) {
        const auto* const entry = reinterpret_cast<const Entry*>(found);
        EXPECT_EQ(entry->key.hash, hash);
        EXPECT_TRUE(std::any_of(model.begin(), model.end(),
                                [&](const auto& item) { return item.second == entry; }));
    }
}

TEST(EntryIndex, AnEmptyIndexFindsNothing) {
    const EntryIndex index;
    const FakeEntry absent(7, 1);
    EXPECT_EQ(index.find(absent.probe()), nullptr);
    EXPECT_EQ(index.candidate(7), nullptr);
    EXPECT_EQ(index.size(), 0U);
}

TEST(EntryIndex, AgreesWithAMapThroughCollidingInsertsAndErases) {
    std::mt19937_64 random(42);
    EntryIndex index;
    std::vector<std::unique_ptr<FakeEntry>> pool;
    // Every id maps to one entry; hashes are few (8 values times a high part that the mask
    // drops), so runs are long and mix keys of equal hash but different names.
    for (std::uint32_t id = 0; id < 256; ++id) {
        const std::uint64_t hash = (random() % 8) | (static_cast<std::uint64_t>(id % 3) << 40);
        pool.push_back(std::make_unique<FakeEntry>(hash, static_cast<std::uint8_t>(id)));
    }
    std::map<std::uint32_t, const Entry*> model;
    for (int step = 0; step < 20000; ++step) {
        const auto id = static_cast<std::uint32_t>(random() % pool.size());
        FakeEntry& fake = *pool[id];
        const bool present = model.contains(id);
        if (random() % 3 != 0 && !present) {
            index.reserve_one_more();
            index.insert(fake.entry.get());
            model[id] = fake.entry.get();
        } else if (present) {
            index.erase(fake.entry.get());
            model.erase(id);
        }
        ASSERT_EQ(index.size(), model.size()) << "step " << step;
        if (step % 97 == 0) {
            for (std::uint32_t k = 0; k < pool.size(); ++k) {
                const auto found = model.find(k);
                const Entry* expected = found == model.end() ? nullptr : found->second;
                ASSERT_EQ(index.find(pool[k]->probe()), expected) << "step " << step << " id " << k;
                expect_candidate(index, model, pool, pool[k]->entry->key.hash);
            }
        }
    }
    index.clear();
    EXPECT_EQ(index.size(), 0U);
    for (const auto& fake : pool) {
        EXPECT_EQ(index.find(fake->probe()), nullptr);
        EXPECT_EQ(index.candidate(fake->entry->key.hash), nullptr);
    }
}

}  // namespace
}  // namespace moat::cache
