#include "log_entry.hpp"

#include <array>

#include "moat/core/ascii.hpp"
#include "moat/core/bytes.hpp"
#include "moat/wire/header.hpp"

namespace moat::server {

void fill_question(std::span<const std::uint8_t> query, querylog::Entry& entry) noexcept {
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init): [0, n) is written before it is read
    std::array<char, 253> text;
    std::size_t n = 0;
    std::size_t pos = wire::kHeaderSize;
    entry.qname.assign("");
    entry.qtype = 0;
    if (query.size() <= pos || load_u16(query.data() + 4) == 0) {
        return;
    }
    while (true) {
        if (pos >= query.size()) {
            return;
        }
        const std::uint8_t len = query[pos++];
        if (len == 0) {
            break;
        }
        // Compression pointers and label types other than plain have no place in a question.
        if (len > 63 || pos + len > query.size() || n + len + (n != 0 ? 1 : 0) > text.size()) {
            return;
        }
        if (n != 0) {
            text[n++] = '.';
        }
        for (std::size_t i = 0; i < len; ++i) {
            const auto c = static_cast<char>(ascii_lower(query[pos + i]));
            // A dot or an unprintable byte inside a label would make the text ambiguous.
            text[n++] = (c > ' ' && c < 0x7F && c != '.') ? c : '?';
        }
        pos += len;
    }
    if (pos + 2 > query.size()) {
        return;
    }
    entry.qname.assign(n == 0 ? std::string_view(".") : std::string_view(text.data(), n));
    entry.qtype = load_u16(query.data() + pos);
}

std::uint16_t question_type(std::span<const std::uint8_t> query) noexcept {
    std::size_t pos = wire::kHeaderSize;
    if (query.size() <= pos || load_u16(query.data() + 4) == 0) {
        return 0;
    }
    while (pos < query.size()) {
        const std::uint8_t len = query[pos];
        if (len == 0) {
            return pos + 3 <= query.size() ? load_u16(query.data() + pos + 1) : 0;
        }
        if (len > 63) {
            return 0;
        }
        pos += 1U + len;
    }
    return 0;
}

void fill_decision(const engine::Decision& decision, std::span<const std::uint8_t> answer,
                   const filter::Snapshot* snapshot, querylog::Entry& entry) noexcept {
    entry.outcome = engine::to_text(decision.outcome);
    entry.rcode =
        answer.size() >= wire::kHeaderSize ? static_cast<std::uint8_t>(answer[3] & 0x0F) : 0;
    entry.ede = decision.ede;
    entry.list.assign("");
    entry.line = 0;
    entry.pattern.assign("");
    const filter::Verdict& v = decision.verdict;
    if (v.action == filter::Action::none || snapshot == nullptr ||
        v.list >= snapshot->lists().size()) {
        return;
    }
    entry.list.assign(snapshot->lists()[v.list].spec.name);
    entry.line = v.line;
    entry.pattern.assign(snapshot->regex_pattern(v));
}

}  // namespace moat::server
