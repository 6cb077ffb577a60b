#include "moat/querylog/batch.hpp"

namespace moat::querylog {
namespace {

// Kept between batches up to this size; a burst's larger buffers are freed after it is written.
constexpr std::size_t kKeepBytes = std::size_t{256} * 1024;

}  // namespace

void Batch::add(const Entry& e) {
    items_.push_back(Item{EntryFields::of(e), static_cast<std::uint32_t>(texts_.size())});
    for (const std::string_view text : texts_of(e)) {
        texts_.append(text);
    }
}

std::string_view Batch::text(const Item& item, int which) const noexcept {
    std::size_t start = item.text;
    for (int i = 0; i < which; ++i) {
        start += item.lengths[static_cast<std::size_t>(i)];
    }
    return std::string_view(texts_).substr(start, item.lengths[static_cast<std::size_t>(which)]);
}

void Batch::clear() {
    if (memory_bytes() > kKeepBytes) {
        std::vector<Item>().swap(items_);
        std::string().swap(texts_);
    } else {
        items_.clear();
        texts_.clear();
    }
}

}  // namespace moat::querylog
