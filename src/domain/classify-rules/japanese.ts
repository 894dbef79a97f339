import { cjk } from './patterns.js';
import type { ReplyRule } from './types.js';

/** The Japanese rules (ja). */
export const JA_RULES: readonly ReplyRule[] = [
  {
    id: 'ja-unsub',
    label: 'unsubscribe',
    language: 'ja',
    pattern: cjk(
      '配信停止|配信を停止|配信解除|送らないでください|送信しないでください|送付不要|(?:ご)?連絡(?:は)?不要|(?:リスト|名簿|データベース|配信先)から(?:削除|外して)|連絡しないでください',
    ),
    confidence: 0.95,
  },
  {
    id: 'ja-left',
    label: 'left_company',
    language: 'ja',
    pattern: cjk('退職(?:いたしました|致しました|しました|しております)|既に退職|退社(?:いたしました|しました)'),
    confidence: 0.95,
  },
  {
    id: 'ja-ooo',
    label: 'out_of_office',
    language: 'ja',
    pattern: cjk('不在にしております|不在のため|休暇(?:のため|中|をいただいて)|外出(?:中|しております)|出張(?:中|のため)|戻り次第|確認ができません'),
    confidence: 0.92,
  },
  {
    id: 'ja-wrong',
    label: 'wrong_person',
    language: 'ja',
    pattern: cjk('担当ではありません|担当者ではありません|担当外|私の担当では'),
    confidence: 0.88,
  },
  {
    id: 'ja-neg',
    label: 'negative',
    language: 'ja',
    pattern: cjk('見送らせて|興味(?:は|が)?(?:ありません|ない)|必要ありません|間に合っております'),
    confidence: 0.9,
  },
  {
    id: 'ja-meet',
    label: 'meeting_intent',
    language: 'ja',
    pattern: cjk('打ち合わせ|ミーティング|面談|日程調整'),
    confidence: 0.85,
  },
  {
    id: 'ja-pos',
    label: 'positive',
    language: 'ja',
    pattern: cjk('興味があります|資料を(?:送って|お送り)'),
    confidence: 0.8,
  },
];
