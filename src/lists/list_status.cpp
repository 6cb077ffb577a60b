#include "moat/lists/list_status.hpp"

#include <nlohmann/json.hpp>

#include "status_json.hpp"

namespace moat::lists {
namespace detail {

nlohmann::json status_document(const ListStatus& s) {
    nlohmann::json invalid = nlohmann::json::array();
    for (const filter::InvalidLine& bad : s.first_invalid) {
        invalid.push_back({{"line", bad.line}, {"text", bad.text}});
    }
    return {
        {"name", s.name},
        {"url", s.url},
        {"entries", s.entries},
        {"lines", s.lines},
        {"invalid", s.invalid},
        {"first_invalid", invalid},
        {"bytes", s.bytes},
        {"content_digest", s.content_hash},
        {"etag", s.etag},
        {"last_modified", s.last_modified},
        {"last_changed", s.last_changed},
        {"last_attempt", s.last_attempt},
        {"last_success", s.last_success},
        {"last_error", s.last_error},
        {"failures", s.failures},
    };
}

std::optional<ListStatus> status_from_document(const nlohmann::json& doc) {
    if (!doc.is_object()) {
        return std::nullopt;
    }
    try {
        ListStatus s;
        s.name = doc.value("name", "");
        s.url = doc.value("url", "");
        s.entries = doc.value("entries", std::uint64_t{0});
        s.lines = doc.value("lines", std::uint64_t{0});
        s.invalid = doc.value("invalid", std::uint64_t{0});
        for (const auto& bad : doc.value("first_invalid", nlohmann::json::array())) {
            s.first_invalid.push_back(
                {bad.value("line", std::uint64_t{0}), bad.value("text", std::string())});
        }
        s.bytes = doc.value("bytes", std::uint64_t{0});
        // "content_hash" (before 2026-12-03) was FNV-1a, a different hash: such a status reads as
        // one without a hash, checked by size until the next download writes "content_digest".
        s.content_hash = doc.value("content_digest", std::uint64_t{0});
        s.etag = doc.value("etag", "");
        s.last_modified = doc.value("last_modified", "");
        s.last_changed = doc.value("last_changed", std::int64_t{0});
        s.last_attempt = doc.value("last_attempt", std::int64_t{0});
        s.last_success = doc.value("last_success", std::int64_t{0});
        s.last_error = doc.value("last_error", "");
        s.failures = doc.value("failures", std::uint32_t{0});
        return s;
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;  // a field of the wrong type: as good as no status
    }
}

}  // namespace detail

std::string to_json(const ListStatus& s) {
    // Invalid lines are list text: whatever bytes a server sent must not make dump() throw.
    return detail::status_document(s).dump(2, ' ', false,
                                           nlohmann::json::error_handler_t::replace) +
           "\n";
}

std::optional<ListStatus> status_from_json(std::string_view text) {
    const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
    return doc.is_discarded() ? std::nullopt : detail::status_from_document(doc);
}

}  // namespace moat::lists
