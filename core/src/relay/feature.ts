import type { Feature } from '../features.ts';

export default {
  name: 'relay',
  async register() {},
} satisfies Feature;
