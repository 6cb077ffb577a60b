#include "answers.hpp"

#include "moat/wire/header.hpp"
#include "moat/wire/message_builder.hpp"
#include "moat/wire/message_view.hpp"
#include "moat/wire/record.hpp"
#include "report.hpp"

namespace moat::bench {

/// An upstream answer: the question and one A (or AAAA) record.
std::vector<std::uint8_t> make_answer(const wire::Name& name, wire::RrType qtype, std::size_t i) {
    std::vector<std::uint8_t> out;
    wire::MessageBuilder b(&out);
    b.header().flags = wire::Header::kQr | wire::Header::kRd | wire::Header::kRa;
    const auto n = static_cast<std::uint32_t>(i);
    const std::vector<std::uint8_t> rdata =
        qtype == wire::RrType::a
            ? wire::encode::a({10, static_cast<std::uint8_t>(n >> 16U),
                               static_cast<std::uint8_t>(n >> 8U), static_cast<std::uint8_t>(n)})
            : wire::encode::aaaa({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                  static_cast<std::uint8_t>(n >> 16U),
                                  static_cast<std::uint8_t>(n >> 8U),
                                  static_cast<std::uint8_t>(n)});
    if (!b.add_question(name, qtype) ||
        !b.add_record(wire::Section::answer, name.wire(), qtype, wire::to_u16(wire::RrClass::in),
                      kAnswerTtl, rdata) ||
        !b.finish()) {
        abort_run("answers", "cannot build an answer for " + name.to_text());
    }
    return out;
}

/// What an upstream would send back for `upstream_query`: its question and one A record.
std::vector<std::uint8_t> upstream_reply(std::span<const std::uint8_t> upstream_query,
                                         std::size_t i) {
    const auto view = wire::MessageView::parse(upstream_query);
    if (!view || view->question() == nullptr) {
        abort_run("answers", "the engine's upstream query does not parse");
    }
    const wire::Question& q = *view->question();
    const wire::Name qname = wire::Name::from_view(q.qname);
    std::vector<std::uint8_t> out;
    wire::MessageBuilder b(&out);
    b.header().id = view->header().id;
    b.header().flags = wire::Header::kQr | wire::Header::kRd | wire::Header::kRa;
    const auto n = static_cast<std::uint32_t>(i);
    const auto rdata =
        wire::encode::a({10, static_cast<std::uint8_t>(n >> 16U),
                         static_cast<std::uint8_t>(n >> 8U), static_cast<std::uint8_t>(n)});
    if (!b.set_edns(wire::EdnsOptions{}) || !b.add_question(qname, q.qtype, q.qclass) ||
        !b.add_record(wire::Section::answer, qname.wire(), wire::RrType::a,
                      wire::to_u16(wire::RrClass::in), 3600, rdata) ||
        !b.finish()) {
        abort_run("answers", "cannot build an upstream reply");
    }
    return out;
}

engine::LocalZone make_local_zone() {
    engine::LocalZone zone;
    std::uint8_t host = 10;
    for (const std::string_view n : kLocalNames) {
        zone.add_address(wire::Name::from_text(n).value(), IpAddress::v4_of(192, 168, 1, host++));
    }
    zone.generate_reverse();
    return zone;
}

}  // namespace moat::bench
