#include "queries.hpp"

#include <string>

#include "moat/wire/message_builder.hpp"
#include "report.hpp"

namespace moat::bench {

wire::Name mixed_case_wire(std::string_view dotted, Rng& rng) {
    std::string text(dotted);
    for (char& c : text) {
        if (c >= 'a' && c <= 'z' && rng.below(4) == 0) {
            c = static_cast<char>(c - 'a' + 'A');
        }
    }
    auto name = wire::Name::from_text(text);
    if (!name) {
        abort_run("queries", "generated name '" + text + "' is not a valid DNS name");
    }
    return *name;
}

void blocked_query_name(std::string_view listed, DomainGenerator& gen, std::string& out) {
    out.clear();
    if (gen.rng().below(2) == 0) {
        gen.label(out);
        out.push_back('.');
    }
    out.append(listed);
}

void NamePool::add(std::string_view dotted, Rng& rng) {
    const wire::Name name = mixed_case_wire(dotted, rng);
    meta_.push_back({static_cast<std::uint32_t>(bytes_.size()),
                     static_cast<std::uint8_t>(name.length()),
                     static_cast<std::uint8_t>(name.label_count())});
    bytes_.insert(bytes_.end(), name.wire().begin(), name.wire().end());
}

void NamePool::finish() {
    views_.clear();
    views_.reserve(meta_.size());
    for (const Meta& m : meta_) {
        // Each view's base is its own name: the name is uncompressed, so nothing points back.
        views_.emplace_back(bytes_.data() + m.start, 0, m.length, m.labels);
    }
    std::vector<Meta>().swap(meta_);
}

std::size_t NamePool::memory_bytes() const noexcept {
    return bytes_.capacity() + meta_.capacity() * sizeof(Meta) +
           views_.capacity() * sizeof(wire::NameView);
}

void QueryPool::add(std::string_view dotted, wire::RrType qtype, Rng& rng) {
    const wire::Name name = mixed_case_wire(dotted, rng);
    std::vector<std::uint8_t> msg;
    wire::MessageBuilder b(&msg);
    b.header().id = static_cast<std::uint16_t>(rng.next());
    b.header().flags = wire::Header::kRd;
    if (!b.set_edns(wire::EdnsOptions{}) || !b.add_question(name, qtype) || !b.finish()) {
        abort_run("queries", "cannot build a query for '" + std::string(dotted) + "'");
    }
    bytes_.insert(bytes_.end(), msg.begin(), msg.end());
    starts_.push_back(static_cast<std::uint32_t>(bytes_.size()));
}

std::vector<std::uint32_t> visit_order(std::size_t pool, std::size_t iterations, Rng& rng) {
    std::vector<std::uint32_t> order(iterations);
    std::vector<std::uint32_t> pass(pool);
    for (std::size_t i = 0; i < iterations; i += pool) {
        for (std::size_t j = 0; j < pool; ++j) {
            pass[j] = static_cast<std::uint32_t>(j);
        }
        rng.shuffle(pass);
        for (std::size_t j = 0; j < pool && i + j < iterations; ++j) {
            order[i + j] = pass[j];
        }
    }
    return order;
}

}  // namespace moat::bench
