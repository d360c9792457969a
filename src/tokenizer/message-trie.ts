/**
 * The chat messages of recent conversations as a tree: the node at depth `i` is a conversation's
 * message `i`, and conversations sharing their first messages (a system prompt, the turns before a
 * fork) share those nodes. A new turn walks the tree along its messages, comparing each with the
 * held one (a length check, then a string comparison, which V8 does as a native memory
 * comparison): a conversation's earlier messages are found without hashing their text, and the
 * walk is exact, never a hash match. Each node knows the ids of the conversation through it: the
 * start of a `ConversationIds` array, shared by the messages of one conversation, so a turn that
 * continues it appends there. Least recently used messages go first, leaves only, within a byte
 * budget: a message's text costs 2 bytes per code unit, and an ids array its capacity at 4 bytes
 * an id, for as long as a held message uses it.
 */
import type { MessageText } from "./chat.ts";
import { ConversationIds } from "./conversation-ids.ts";

/** A held message: its role and text, where it hangs, what follows it, and the ids through it. */
export interface MessageNode extends MessageText {
  readonly parent: MessageNode | null;
  /** The messages that followed this one, by text length (a length is rarely shared, so lists stay short). */
  readonly children: Map<number, MessageNode[]>;
  /** The conversation's ids through this message are `ids.view(end)`; this message's are from `start`. */
  ids: ConversationIds;
  readonly start: number;
  readonly end: number;
  /** False once evicted: a walk that found it before may still read its ids, but nothing hangs on it. */
  held: boolean;
}

/** Where a new message's ids are: `ids` from `start` to `end`. */
export interface HeldIds {
  readonly ids: ConversationIds;
  readonly start: number;
  readonly end: number;
}

function node(message: MessageText, at: HeldIds, parent: MessageNode | null): MessageNode {
  const { role, text } = message;
  return { role, text, parent, children: new Map(), ids: at.ids, start: at.start, end: at.end, held: true };
}

function child(parent: MessageNode, message: MessageText): MessageNode | undefined {
  return parent.children
    .get(message.text.length)
    ?.find((c) => c.role === message.role && c.text === message.text);
}

/** Recent conversations' messages and their ids, within a byte budget. */
export class MessageTrie {
  /** The empty conversation. */
  readonly root = node({ role: "", text: "" }, { ids: new ConversationIds(0), start: 0, end: 0 }, null);
  /**
   * Held nodes, least recently used first. A path is touched from its deepest node up, so a
   * parent is always more recent than its children and the least recent node is a leaf.
   */
  private readonly recency = new Set<MessageNode>();
  /** Held nodes per ids array: an array's bytes count while a held node uses it. */
  private readonly users = new Map<ConversationIds, number>();
  private held = 0;

  constructor(private readonly budgetBytes: number) {}

  /** Bytes held now (texts and ids arrays). */
  get bytes(): number {
    return this.held;
  }

  /** Messages held now. */
  get size(): number {
    return this.recency.size;
  }

  /** The held nodes of the longest held prefix of `messages`, message by message. */
  match(messages: readonly MessageText[]): MessageNode[] {
    const path: MessageNode[] = [];
    let at = this.root;
    for (const message of messages) {
      const next = child(at, message);
      if (!next) break;
      path.push(next);
      at = next;
    }
    return path;
  }

  /**
   * Hangs `messages` after `path`, the nodes `match` found for the messages before them, each
   * with its ids in `at` (in order). When a message is added, the nodes of `path` move to `at`'s
   * array if it is another one (it holds their ids too), so an outgrown array is let go. A message already held there
   * (another turn added it meanwhile) is reused. Nothing is added when `path` lost a node to
   * eviction meanwhile, or past a message bigger than the budget. The whole path is then the most
   * recently used.
   */
  extend(path: readonly MessageNode[], messages: readonly MessageText[], at: readonly HeldIds[]): void {
    let last = path.length === 0 ? this.root : path[path.length - 1]!;
    const added = [...path];
    let grown = false;
    for (let k = 0; k < messages.length && last.held; k++) {
      const held = child(last, messages[k]!);
      const next = held ?? this.add(last, messages[k]!, at[k]!);
      if (!next) break;
      grown ||= !held;
      added.push(next);
      last = next;
    }
    if (grown) for (const n of path) if (n.held) this.use(n, at[0]!.ids);
    this.touch(added);
    this.evict();
  }

  /** Marks `path`'s held nodes the most recently used. */
  private touch(path: readonly MessageNode[]): void {
    for (let i = path.length - 1; i >= 0; i--) {
      const n = path[i]!;
      if (!n.held) continue;
      this.recency.delete(n);
      this.recency.add(n);
    }
  }

  private add(parent: MessageNode, message: MessageText, at: HeldIds): MessageNode | null {
    const added = node(message, at, parent);
    const bytes = message.text.length * 2 + (this.users.has(at.ids) ? 0 : at.ids.bytes);
    if (bytes > this.budgetBytes) return null;
    const siblings = parent.children.get(message.text.length);
    if (siblings) siblings.push(added);
    else parent.children.set(message.text.length, [added]);
    this.recency.add(added);
    this.held += message.text.length * 2;
    this.count(added.ids, 1);
    return added;
  }

  /** `n` reads its ids from `ids` from now on. */
  private use(n: MessageNode, ids: ConversationIds): void {
    if (n.ids === ids) return;
    this.count(n.ids, -1);
    n.ids = ids;
    this.count(ids, 1);
  }

  /** Counts `change` more held nodes on `ids`, its bytes held while any is. */
  private count(ids: ConversationIds, change: number): void {
    const users = (this.users.get(ids) ?? 0) + change;
    if (users === 0) {
      this.users.delete(ids);
      this.held -= ids.bytes;
      return;
    }
    if (users === change) this.held += ids.bytes;
    this.users.set(ids, users);
  }

  private evict(): void {
    for (const oldest of this.recency) {
      if (this.held <= this.budgetBytes) return;
      this.recency.delete(oldest);
      this.held -= oldest.text.length * 2;
      this.count(oldest.ids, -1);
      oldest.held = false;
      const siblings = oldest.parent!.children;
      const list = siblings.get(oldest.text.length)!;
      if (list.length === 1) siblings.delete(oldest.text.length);
      else list.splice(list.indexOf(oldest), 1);
    }
  }
}
