import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app';
import { sessionCredentials } from './api/credentials';
import { readBootConfig } from './boot-config';
import { prefetchDashboard } from './pages/dashboard/dashboard-query';
import { RouterProvider } from './router';
import './styles.css';

const boot = readBootConfig(window.__TRELLIS__);
// the home page's data travels beside the session check, not after it
prefetchDashboard(boot, sessionCredentials(window.sessionStorage).get());
const root = document.getElementById('root');
if (root)
  createRoot(root).render(
    <StrictMode>
      <RouterProvider basePath={boot.basePath}>
        <App boot={boot} />
      </RouterProvider>
    </StrictMode>,
  );
