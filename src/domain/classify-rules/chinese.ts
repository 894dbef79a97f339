import { cjk } from './patterns.js';
import type { ReplyRule } from './types.js';

/** The Chinese rules (zh). */
export const ZH_RULES: readonly ReplyRule[] = [
  {
    id: 'zh-unsub',
    label: 'unsubscribe',
    language: 'zh',
    pattern: cjk('退订|退訂|取消订阅|取消訂閱|不要再(?:给|給|向)我|不要再(?:发|發|寄)|别再(?:给|發|发)|(?:列表|名单)中?删除|不再接收'),
    confidence: 0.95,
  },
  {
    id: 'zh-left',
    label: 'left_company',
    language: 'zh',
    pattern: cjk('已离职|已離職|离职了|已离开公司|已退休|不在[^。，,.]{0,12}工作了'),
    confidence: 0.95,
  },
  {
    id: 'zh-ooo',
    label: 'out_of_office',
    language: 'zh',
    pattern: cjk('休假|不在办公室|不在辦公室|出差|返回办公室|年假'),
    confidence: 0.92,
  },
  {
    id: 'zh-wrong',
    label: 'wrong_person',
    language: 'zh',
    pattern: cjk('我不负责|我不負責|不是负责人|不归我管'),
    confidence: 0.88,
  },
  {
    id: 'zh-neg',
    label: 'negative',
    language: 'zh',
    pattern: cjk('不用了|不感兴趣|不感興趣|没有兴趣|不需要'),
    confidence: 0.9,
  },
  {
    id: 'zh-meet',
    label: 'meeting_intent',
    language: 'zh',
    pattern: cjk('开个会|开会|會議|会议|通话|见面'),
    confidence: 0.85,
  },
  {
    id: 'zh-pos',
    label: 'positive',
    language: 'zh',
    pattern: cjk('很感兴趣|了解更多|(?:发|發)[^。]{0,6}资料'),
    confidence: 0.8,
  },
];
