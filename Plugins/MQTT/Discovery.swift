import HomeModel

/// Home Assistant MQTT discovery: topic parsing, abbreviated keys, the `~` base topic.
///
/// A discovery message arrives on `<prefix>/<component>/[<node_id>/]<object_id>/config` with a
/// JSON payload; an empty payload removes the entity. See
/// <https://www.home-assistant.io/integrations/mqtt/#mqtt-discovery>.
enum Discovery {
    /// Where a discovery message came from.
    struct Topic: Hashable, Sendable {
        let component: String
        let nodeID: String?
        let objectID: String

        /// The entity's key inside the plugin: stable for one discovery topic.
        var key: String { [component, nodeID, objectID].compactMap { $0 }.joined(separator: "/") }
    }

    /// Parses a discovery topic; nil when `topic` is not one (a state topic under the prefix).
    static func parseTopic(_ topic: String, prefix: String) -> Topic? {
        guard topic.hasSuffix("/config"), topic.hasPrefix(prefix), topic.utf8.dropFirst(prefix.utf8.count).first == UInt8(ascii: "/")
        else { return nil }
        let parts = topic.dropFirst(prefix.count + 1).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.last == "config", parts.count == 3 || parts.count == 4, !parts.dropLast().contains(where: \.isEmpty)
        else { return nil }
        if parts.count == 3 { return Topic(component: String(parts[0]), nodeID: nil, objectID: String(parts[1])) }
        return Topic(component: String(parts[0]), nodeID: String(parts[1]), objectID: String(parts[2]))
    }

    /// Expands abbreviated keys (in the entity, its `device` block, its `origin` block and its
    /// `availability` entries) and substitutes the `~` base topic.
    static func normalise(_ payload: [String: Value]) -> [String: Value] {
        var config: [String: Value] = [:]
        for (key, value) in payload { config[abbreviations[key] ?? key] = value }
        if case .object(let device)? = config["device"] {
            var d: [String: Value] = [:]
            for (key, value) in device { d[deviceAbbreviations[key] ?? key] = value }
            config["device"] = .object(d)
        }
        if case .object(let origin)? = config["origin"] {
            var o: [String: Value] = [:]
            for (key, value) in origin { o[deviceAbbreviations[key] ?? key] = value }
            config["origin"] = .object(o)
        }
        if case .list(let entries)? = config["availability"] {
            config["availability"] = .list(
                entries.map { entry in
                    guard case .object(let e) = entry else { return entry }
                    var out: [String: Value] = [:]
                    for (key, value) in e { out[abbreviations[key] ?? key] = value }
                    return .object(out)
                })
        }
        if let base = config.removeValue(forKey: "~")?.stringValue {
            for (key, value) in config where key.hasSuffix("topic") {
                if case .string(let s) = value { config[key] = .string(substituteBase(s, base)) }
            }
            if case .list(let entries)? = config["availability"] {
                config["availability"] = .list(
                    entries.map { entry in
                        guard case .object(var e) = entry, let t = e["topic"]?.stringValue else { return entry }
                        e["topic"] = .string(substituteBase(t, base))
                        return .object(e)
                    })
            }
        }
        return config
    }

    static func substituteBase(_ topic: String, _ base: String) -> String {
        if topic.hasPrefix("~") { return base + topic.dropFirst() }
        if topic.hasSuffix("~") { return topic.dropLast() + base }
        return topic
    }

    /// Home Assistant's abbreviations (homeassistant/components/mqtt/abbreviations.py) for the
    /// components this plugin maps.
    static let abbreviations: [String: String] = [
        "act_t": "action_topic", "act_tpl": "action_template", "atype": "automation_type",
        "avty": "availability", "avty_mode": "availability_mode", "avty_t": "availability_topic",
        "avty_tpl": "availability_template", "bri_cmd_t": "brightness_command_topic",
        "bri_cmd_tpl": "brightness_command_template", "bri_scl": "brightness_scale",
        "bri_stat_t": "brightness_state_topic", "bri_tpl": "brightness_template",
        "bri_val_tpl": "brightness_value_template", "clr_temp_cmd_tpl": "color_temp_command_template",
        "clr_temp_cmd_t": "color_temp_command_topic", "clr_temp_stat_t": "color_temp_state_topic",
        "clr_temp_tpl": "color_temp_template", "clr_temp_val_tpl": "color_temp_value_template",
        "clr_temp_k": "color_temp_kelvin", "clrm": "color_mode", "cmd_off_tpl": "command_off_template",
        "cmd_on_tpl": "command_on_template", "cmd_t": "command_topic", "cmd_tpl": "command_template",
        "curr_temp_t": "current_temperature_topic", "curr_temp_tpl": "current_temperature_template",
        "dev": "device", "dev_cla": "device_class", "e": "encoding", "en": "enabled_by_default",
        "ent_cat": "entity_category", "exp_aft": "expire_after", "frc_upd": "force_update", "ic": "icon",
        "json_attr_t": "json_attributes_topic", "json_attr_tpl": "json_attributes_template",
        "max_mirs": "max_mireds", "min_mirs": "min_mireds", "max_kelvin": "max_kelvin", "min_kelvin": "min_kelvin",
        "max_temp": "max_temp", "min_temp": "min_temp", "mode_cmd_tpl": "mode_command_template",
        "mode_cmd_t": "mode_command_topic", "mode_stat_tpl": "mode_state_template",
        "mode_stat_t": "mode_state_topic", "modes": "modes", "obj_id": "object_id", "off_dly": "off_delay",
        "on_cmd_type": "on_command_type", "opt": "optimistic", "o": "origin",
        "pct_cmd_t": "percentage_command_topic", "pct_cmd_tpl": "percentage_command_template",
        "pct_stat_t": "percentage_state_topic", "pct_val_tpl": "percentage_value_template", "pl": "payload",
        "pl_avail": "payload_available", "pl_cls": "payload_close", "pl_lock": "payload_lock",
        "pl_not_avail": "payload_not_available", "pl_off": "payload_off", "pl_on": "payload_on",
        "pl_open": "payload_open", "pl_stop": "payload_stop", "pl_unlk": "payload_unlock",
        "pos_clsd": "position_closed", "pos_open": "position_open", "pos_t": "position_topic",
        "pos_tpl": "position_template", "pr_mode_cmd_t": "preset_mode_command_topic",
        "pr_mode_stat_t": "preset_mode_state_topic", "pr_modes": "preset_modes", "ret": "retain",
        "set_pos_t": "set_position_topic", "set_pos_tpl": "set_position_template",
        "spd_rng_max": "speed_range_max", "spd_rng_min": "speed_range_min", "stat_cla": "state_class",
        "stat_clsd": "state_closed", "stat_closing": "state_closing", "stat_jam": "state_jammed",
        "stat_locked": "state_locked", "stat_locking": "state_locking", "stat_off": "state_off",
        "stat_on": "state_on", "stat_open": "state_open", "stat_opening": "state_opening",
        "stat_stopped": "state_stopped", "stat_unlocked": "state_unlocked", "stat_unlocking": "state_unlocking",
        "stat_t": "state_topic", "stat_tpl": "state_template", "stat_val_tpl": "state_value_template",
        "stype": "subtype", "sup_clrm": "supported_color_modes", "sug_dsp_prc": "suggested_display_precision",
        "t": "topic", "temp_cmd_tpl": "temperature_command_template", "temp_cmd_t": "temperature_command_topic",
        "temp_stat_tpl": "temperature_state_template", "temp_stat_t": "temperature_state_topic",
        "temp_unit": "temperature_unit", "uniq_id": "unique_id", "unit_of_meas": "unit_of_measurement",
        "val_tpl": "value_template", "fan_mode_cmd_t": "fan_mode_command_topic",
        "fan_mode_stat_t": "fan_mode_state_topic", "pl_rst_pct": "payload_reset_percentage",
        "stat_tpl_val": "state_value_template",
    ]

    static let deviceAbbreviations: [String: String] = [
        "cns": "connections", "ids": "identifiers", "mf": "manufacturer", "mdl": "model", "mdl_id": "model_id",
        "hw": "hw_version", "sw": "sw_version", "sa": "suggested_area", "cu": "configuration_url",
        "sn": "serial_number", "url": "support_url",
    ]
}
