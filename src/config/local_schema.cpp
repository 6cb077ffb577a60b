// The [local] section: local records in either of two shapes, validated per record type.
//
//   records = [{ name = "nas.lan", type = "A", value = "192.168.1.10" }]     (array form)
//   [local.records]                                                         (table form)
//   "nas.lan" = "A 192.168.1.10"
//   "printer.lan" = ["A 192.168.1.20", "AAAA fd00::20"]
#include <algorithm>
#include <cctype>

#include "schema.hpp"
#include "table_reader.hpp"

namespace moat::config::detail {
namespace {

constexpr std::size_t kMaxTxt = 4000;

std::optional<RecordType> record_type(std::string_view text) {
    std::string upper(text);
    std::transform(upper.begin(), upper.end(), upper.begin(), [](char c) {
        return static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    });
    for (const RecordType t :
         {RecordType::a, RecordType::aaaa, RecordType::cname, RecordType::ptr, RecordType::txt}) {
        if (upper == to_text(t)) {
            return t;
        }
    }
    return std::nullopt;
}

/// Validates `value` for `type` and stores its canonical form in `record.value`.
bool set_value(Context& ctx, const Node& at, const std::string& path, LocalRecord& record,
               std::string_view value) {
    Node text = at;
    text.kind = Node::Kind::string;
    text.text = std::string(value);
    switch (record.type) {
        case RecordType::a:
        case RecordType::aaaa: {
            const auto ip = read_ip(ctx, text, path);
            if (ip && ip->v6 != (record.type == RecordType::aaaa)) {
                ctx.error(Errc::bad_value, at.line, path,
                          "\"" + std::string(value) + "\" is not an " +
                              (record.type == RecordType::a ? "IPv4" : "IPv6") + " address");
                return false;
            }
            if (ip) {
                record.value = ip->to_text();
            }
            return ip.has_value();
        }
        case RecordType::cname:
        case RecordType::ptr: {
            const auto name = read_domain(ctx, text, path);
            if (name) {
                record.value = *name;
            }
            return name.has_value();
        }
        case RecordType::txt:
            if (value.size() > kMaxTxt) {
                ctx.error(Errc::out_of_range, at.line, path,
                          "TXT text longer than " + std::to_string(kMaxTxt) + " bytes");
                return false;
            }
            record.value = std::string(value);
            return true;
    }
    return false;
}

bool set_type(Context& ctx, const Node& at, const std::string& path, LocalRecord& record,
              std::string_view type) {
    if (const auto t = record_type(type)) {
        record.type = *t;
        return true;
    }
    ctx.error(Errc::bad_value, at.line, path,
              "\"" + std::string(type) + "\" is not one of A, AAAA, CNAME, PTR, TXT");
    return false;
}

/// Array form: { name, type, value }.
void read_record_table(TableReader& t, std::vector<LocalRecord>& out) {
    LocalRecord record;
    bool ok = true;
    const Node* name = t.find("name");
    const Node* type = t.find("type");
    const Node* value = t.find("value");
    for (const auto& [key, node] : {std::pair{"name", name}, {"type", type}, {"value", value}}) {
        if (node == nullptr) {
            t.context().error(Errc::missing_key, t.line(), t.path_of(key),
                              "is required in a local record");
            ok = false;
        } else if (!expect_kind(t.context(), *node, t.path_of(key), Node::Kind::string)) {
            ok = false;
        }
    }
    if (!ok) {
        return;
    }
    const auto domain = read_domain(t.context(), *name, t.path_of("name"));
    if (domain && set_type(t.context(), *type, t.path_of("type"), record, type->text) &&
        set_value(t.context(), *value, t.path_of("value"), record, value->text)) {
        record.name = *domain;
        out.push_back(std::move(record));
    }
}

/// Table form: one "TYPE VALUE" string.
void read_record_text(Context& ctx, const std::string& name, const Node& node,
                      const std::string& path, std::vector<LocalRecord>& out) {
    if (!expect_kind(ctx, node, path, Node::Kind::string, "a \"TYPE VALUE\" string")) {
        return;
    }
    const std::string& text = node.text;
    const std::size_t space = text.find(' ');
    if (space == std::string::npos) {
        ctx.error(Errc::bad_value, node.line, path,
                  "\"" + text + R"(" is not a "TYPE VALUE" record, e.g. "A 192.168.1.10")");
        return;
    }
    LocalRecord record;
    record.name = name;
    const std::size_t start = text.find_first_not_of(' ', space);
    if (set_type(ctx, node, path, record, std::string_view(text).substr(0, space)) &&
        set_value(ctx, node, path, record,
                  start == std::string::npos ? "" : std::string_view(text).substr(start))) {
        out.push_back(std::move(record));
    }
}

}  // namespace

void read_local(TableReader& t, LocalConfig& out) {
    Context& ctx = t.context();
    const std::string path = t.path_of("records");
    if (const Node* records = t.find("records"); records == nullptr) {
    } else if (records->kind == Node::Kind::array) {
        t.array("records", 0, [&](const Node& item, const std::string& p) {
            if (expect_kind(ctx, item, p, Node::Kind::table)) {
                TableReader r(ctx, item, p);
                read_record_table(r, out.records);
                r.finish();
            }
        });
    } else if (expect_kind(ctx, *records, path, Node::Kind::table, "an array or a table")) {
        for (const Field& f : records->fields) {
            Node key_node;
            key_node.kind = Node::Kind::string;
            key_node.line = f.key_line;
            key_node.text = f.key;
            const std::string entry = join(path, f.key);
            const auto name = read_domain(ctx, key_node, entry);
            if (!name) {
                continue;
            }
            if (f.value.kind == Node::Kind::array) {
                for (std::size_t i = 0; i < f.value.items.size(); ++i) {
                    read_record_text(ctx, *name, f.value.items[i], index(entry, i), out.records);
                }
            } else {
                read_record_text(ctx, *name, f.value, entry, out.records);
            }
        }
    }
    t.string("hosts_file", out.hosts_file);
    t.seconds("ttl", out.ttl, std::chrono::seconds{0}, std::chrono::seconds{86400});
}

}  // namespace moat::config::detail
