import type { Feature } from '../features.ts';
import healthRoutes from '../health/routes.ts';
import authRoutes from './routes.ts';

export default {
  name: 'auth',
  async register(app, core) {
    await healthRoutes(app, core);
    await authRoutes(app, core);
  },
} satisfies Feature;
