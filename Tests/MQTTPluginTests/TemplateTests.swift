import HomeModel
import Testing
@testable import MQTTPlugin

@Suite struct TemplateTests {
    func render(_ template: String, _ payload: String) throws -> Value {
        let message = Message(topic: "t", text: payload)
        return try Template(template).render(message.variables)
    }

    @Test(arguments: [
        ("{{ value_json.temperature }}", #"{"temperature": 21.37}"#, Value.double(21.37)),
        ("{{value_json['AM2301'].Temperature}}", #"{"AM2301": {"Temperature": 22.4}}"#, .double(22.4)),
        ("{{ value_json[\"a b\"] }}", #"{"a b": 3}"#, .int(3)),
        ("{{ value_json.list[1] }}", #"{"list": [5, 6]}"#, .int(6)),
        ("{{ value | float }}", "22.81250", .double(22.8125)),
        ("{{ value | int }}", "42.9", .int(42)),
        ("{{ value_json.t | float | round(1) }}", #"{"t": "21.349"}"#, .double(21.3)),
        ("{{ (value_json.t * 10) | round }}", #"{"t": 2.26}"#, .double(23)),
        ("{{ value_json.x | float(0) }}", #"{"x": "n/a"}"#, .double(0)),
        ("{{ value_json.missing | default('none') }}", "{}", .string("none")),
        ("{{ 'ON' if value_json.contact == false else 'OFF' }}", #"{"contact": false}"#, .string("ON")),
        ("{{ 'ON' if value | int > 20 else 'OFF' }}", "25", .string("ON")),
        ("{% if value_json.state == 'open' %}ON{% else %}OFF{% endif %}", #"{"state": "closed"}"#, .string("OFF")),
        ("{%- if value == '1' -%} ON {%- elif value == '0' -%} OFF {%- endif -%}", "0", .string("OFF")),
        ("{{ value_json.state | lower }}", #"{"state": "ON"}"#, .string("on")),
        ("{{ value_json.a is defined }}", #"{"b": 1}"#, .bool(false)),
        ("{{ value_json.POWER }}", #"{"POWER": "ON"}"#, .string("ON")),
        ("T={{ value }}", "5", .string("T=5")),
        ("{{ value_json.on and not value_json.off }}", #"{"on": true, "off": false}"#, .bool(true)),
        ("{{ value_json.v in ['a', 'b'] }}", #"{"v": "b"}"#, .bool(true)),
    ])
    func rendersTheFormsDevicesUse(_ template: String, _ payload: String, _ expected: Value) throws {
        #expect(try render(template, payload) == expected)
    }

    @Test(arguments: [
        "{{ states('sensor.x') }}", "{{ value | regex_replace('a', 'b') }}", "{% for x in y %}{% endfor %}",
        "{{ now() }}", "{{ value_json.a", "{% if x %}no end",
    ])
    func refusesUnsupportedTemplatesWhenCompiled(_ template: String) {
        #expect(throws: TemplateError.self) { try Template(template) }
    }

    @Test(arguments: [
        ("{{ -7.5 % 2 }}", Value.double(0.5)),  // Python: the divisor's sign, for floats too
        ("{{ 7.5 % -2 }}", .double(-0.5)),
        ("{{ -7 % 2 }}", .int(1)),
        ("{{ -7 // 2 }}", .int(-4)),
        ("{{ 2 ** 10 }}", .double(1024)),
        ("{{ 'a' ~ 1 }}", .string("a1")),
        ("{{ value | count }}", .int(3)),
        ("{{ value | tojson }}", .string(#""abc""#)),
        ("{{ value is undefined }}", .bool(false)),
    ])
    func operatorsAndAliases_followPythonAndJinja(_ template: String, _ expected: Value) throws {
        #expect(try render(template, "abc") == expected)
    }

    @Test func theParser_producesTypedOperatorsAndFilters() throws {
        let t = try Template("{{ value | d('x') | float(0) > 1 and not value is none }}")
        guard case .expression(.binary(let op, let left, .unary(.not, .test(_, .none, negated: false)))) = t.root.first else {
            Issue.record("unexpected tree \(t.root)")
            return
        }
        #expect(op == .and)
        guard case .binary(.greater, .filter(.filter(_, .default, _), .float, _), _) = left else {
            Issue.record("unexpected comparison \(left)")
            return
        }
        #expect(Template.Filter(name: "d") == .default && Template.Filter(name: "__list") == nil)
    }

    @Test func explainsAMissingKeyOrANonNumber() throws {
        let missing = #expect(throws: TemplateError.self) { try render("{{ value_json.temperature }}", #"{"humidity": 3}"#) }
        #expect(missing?.message.contains("temperature") == true)
        let notNumber = #expect(throws: TemplateError.self) { try render("{{ value | float }}", "warm") }
        #expect(notNumber?.message.contains("warm") == true)
        let notJSON = #expect(throws: TemplateError.self) { try render("{{ value_json.x }}", "plain") }
        #expect(notJSON?.message.contains("not valid JSON") == true)
    }
}
