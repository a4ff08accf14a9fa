//! Every visible string of the page, in English and Chinese.
//!
//! One table: each key has both texts on one line, so a key without a translation does not compile.
//! Keys are snake_case and start with the component that shows them.

use std::fmt;

/// An interface language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lang {
    /// English, the default when the browser asks for neither.
    En,
    /// Simplified Chinese.
    Zh,
}

impl Lang {
    /// Both languages, in the order the switch shows them.
    pub const ALL: [Lang; 2] = [Lang::En, Lang::Zh];

    /// The BCP 47 tag for `<html lang>` and for storage.
    pub fn tag(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh-CN",
        }
    }

    /// The language for a browser language tag such as `zh-CN`, `zh-Hans-TW` or `en-US`.
    pub fn from_tag(tag: &str) -> Lang {
        match tag.get(..2).map(str::to_ascii_lowercase).as_deref() {
            Some("zh") => Lang::Zh,
            _ => Lang::En,
        }
    }

    /// The other language: what the header's switch changes to.
    pub fn other(self) -> Lang {
        match self {
            Lang::En => Lang::Zh,
            Lang::Zh => Lang::En,
        }
    }
}

impl fmt::Display for Lang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.tag())
    }
}

macro_rules! texts {
    ($($key:ident => $en:literal, $zh:literal;)*) => {
        /// A visible string of the page.
        #[allow(non_camel_case_types, missing_docs)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Key { $($key),* }

        impl Key {
            /// Every key, for the completeness tests.
            pub const ALL: &[Key] = &[$(Key::$key),*];
        }

        /// The text of `key` in `lang`.
        pub fn t(lang: Lang, key: Key) -> &'static str {
            match (lang, key) {
                $((Lang::En, Key::$key) => $en, (Lang::Zh, Key::$key) => $zh,)*
            }
        }
    };
}

texts! {
    app_title => "trainplan", "trainplan";
    app_tagline => "Plan a large-model training run before you queue it", "在排队之前，先把大模型训练规划清楚";
    header_switch_to => "中文", "English";
    header_switch_label => "Switch the interface to Chinese", "将界面切换为英文";
    plan_form_title => "Plan", "规划";
    plan_form_model => "Model", "模型";
    plan_form_nodes => "Nodes", "节点数";
    plan_form_devices_per_node => "Devices per node", "每节点设备数";
    plan_form_n_devices => "Devices in all", "设备总数";
    plan_form_source => "Config source", "配置来源";
    plan_form_bad_count => "Enter a whole number from 1 to 4,294,967,295", "请输入 1 到 4,294,967,295 之间的整数";
    params_title => "Parameters", "参数量";
    params_total => "Total (exact)", "总参数量（精确）";
    params_embedding => "Embedding", "词嵌入";
    params_attention => "Attention", "注意力";
    params_mlp => "MLP", "MLP";
    params_norms => "Norms", "归一化层";
    params_head => "Output head", "输出层";
    params_head_tied => "tied to the embedding", "与词嵌入共享权重";
    params_per_layer => "One decoder layer", "单个解码层";
    params_component => "Component", "组成部分";
    params_count => "Parameters", "参数量";
    params_share => "Share", "占比";
    weights_title => "Weights per device", "每卡权重显存";
    weights_zero3 => "bf16 weights under ZeRO-3", "ZeRO-3 下的 bf16 权重";
    weights_explain => "Every parameter is sharded over all devices, each tensor padded to a multiple of the device count as DeepSpeed does.", "每个参数都切分到全部设备上；与 DeepSpeed 一致，每个张量先补齐到设备数的整数倍。";
    weights_bytes => "bytes", "字节";
    error_title => "This plan cannot be evaluated", "无法计算此规划";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_has_text_in_both_languages() {
        for &key in Key::ALL {
            for lang in Lang::ALL {
                let text = t(lang, key);
                assert!(!text.trim().is_empty(), "{key:?} is empty in {lang}");
                assert_eq!(text, text.trim(), "{key:?} has outer spaces in {lang}");
            }
        }
    }

    #[test]
    fn chinese_is_translated_not_copied() {
        // Names and units may stay the same in both languages; everything else must differ.
        let same_in_both = [Key::app_title, Key::params_mlp];
        for &key in Key::ALL {
            if same_in_both.contains(&key) {
                continue;
            }
            assert_ne!(t(Lang::En, key), t(Lang::Zh, key), "{key:?} is not translated");
        }
    }

    #[test]
    fn browser_tags_pick_a_language() {
        assert_eq!(Lang::from_tag("zh-CN"), Lang::Zh);
        assert_eq!(Lang::from_tag("ZH-tw"), Lang::Zh);
        assert_eq!(Lang::from_tag("zh"), Lang::Zh);
        assert_eq!(Lang::from_tag("en-US"), Lang::En);
        assert_eq!(Lang::from_tag("de"), Lang::En);
        assert_eq!(Lang::from_tag(""), Lang::En);
        assert_eq!(Lang::from_tag("中文"), Lang::En);
    }
}
